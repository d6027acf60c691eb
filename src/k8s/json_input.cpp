#include "gpuadmit/k8s/json_input.hpp"

#include <string>

#include "gpuadmit/k8s/json_document.hpp"
#include "json_reader.hpp"

namespace gpuadmit::k8s {

std::size_t json_depth(std::string_view text, std::size_t cap) noexcept {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > cap) return deepest;
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

Error too_large(std::size_t size, const JsonLimits& limits) {
  return make_error("JSON document of " + std::to_string(size) + " bytes exceeds the limit of " +
                    std::to_string(limits.max_bytes) + " bytes");
}

}  // namespace

Result<nlohmann::json> parse_json(std::string_view text, const JsonLimits& limits,
                                  std::span<const JsonPath> drop) {
  if (text.size() > limits.max_bytes) return too_large(text.size(), limits);
  return read_json(text, limits.max_depth, drop);
}

Result<JsonDocument> parse_json_document(std::string_view text, const JsonLimits& limits,
                                         std::span<const JsonPath> drop) {
  if (text.size() > limits.max_bytes) return too_large(text.size(), limits);
  return JsonDocument::parse(text, limits.max_depth, drop);
}

}  // namespace gpuadmit::k8s
