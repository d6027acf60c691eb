// The pod parser on any JSON: never a crash, an exception or undefined behaviour, and the two ways in (a
// document read from text, and an nlohmann tree as `gpuadmit check` holds a manifest) read the same pod or
// fail with the same message, since both are meant to be one parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto document = gpuadmit::k8s::parse_json_document(text);
  if (!document) return 0;
  const auto from_document = gpuadmit::k8s::parse_pod(document->root());
  const auto tree = gpuadmit::k8s::parse_json(text);
  gpuadmit::fuzz::require(tree.ok(), "a text the document reads, the tree reads");
  const auto from_tree = gpuadmit::k8s::parse_pod(*tree);
  if (from_document.ok() != from_tree.ok()) {
    gpuadmit::fuzz::broken("both ways in accept the same objects",
                           from_document ? from_tree.error().message : from_document.error().message);
  }
  if (!from_document) {
    gpuadmit::fuzz::require(from_document.error().message == from_tree.error().message,
                            "both ways in fail with the same message",
                            from_document.error().message + " | " + from_tree.error().message);
    return 0;
  }
  gpuadmit::fuzz::require(*from_document == *from_tree, "both ways in read the same pod");
  return 0;
}
