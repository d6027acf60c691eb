#include "gpuadmit/k8s/json_input.hpp"

#include <string>

#include "gpuadmit/k8s/json_document.hpp"
#include "json_reader.hpp"

namespace gpuadmit::k8s {
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
