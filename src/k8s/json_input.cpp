#include "gpuadmit/k8s/json_input.hpp"

#include <string>

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

Result<nlohmann::json> parse_json(std::string_view text, const JsonLimits& limits,
                                  std::span<const JsonPath> drop) {
  if (text.size() > limits.max_bytes) {
    return make_error("JSON document of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                      std::to_string(limits.max_bytes) + " bytes");
  }
  return read_json(text, limits.max_depth, drop);
}

}  // namespace gpuadmit::k8s
