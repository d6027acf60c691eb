// The JSON reader on any bytes, against nlohmann::json (what it promises to match, json_reader.cpp): the
// same accept or reject and the same value, bar the stated differences (a leading byte order mark and a
// NUL byte, which the reader rejects, and nesting past its depth limit). The document form
// (parse_json_document, what the webhook reads a review into) holds the same value as the tree form.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace {

bool stated_difference(std::string_view text) {
  return text.starts_with("\xef\xbb\xbf") || text.find('\0') != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const gpuadmit::k8s::JsonLimits limits{std::size_t{1} << 24U, 200};
  const auto ours = gpuadmit::k8s::parse_json(text, limits);
  const auto document = gpuadmit::k8s::parse_json_document(text, limits);
  if (ours.ok() != document.ok()) {
    gpuadmit::fuzz::broken("the tree and the document accept the same texts",
                           ours ? document.error().message : ours.error().message);
  }
  if (stated_difference(text)) {
    gpuadmit::fuzz::require(!ours.ok(), "a BOM or a NUL byte is rejected");
    return 0;
  }
  if (!ours.ok() && ours.error().message.find("nesting deeper than") != std::string::npos) return 0;
  const nlohmann::json theirs = nlohmann::json::parse(text, nullptr, false);
  if (ours.ok() == theirs.is_discarded()) {
    gpuadmit::fuzz::broken("accepted exactly when nlohmann accepts",
                           ours ? "nlohmann rejects it" : ours.error().message);
  }
  if (!ours.ok()) return 0;
  gpuadmit::fuzz::require(*ours == theirs, "the same value as nlohmann's");
  gpuadmit::fuzz::require(ours->dump() == theirs.dump(), "the same text when printed");
  gpuadmit::fuzz::require(gpuadmit::k8s::to_json(document->root()) == *ours,
                          "the document holds the tree's value");
  return 0;
}
