#include "schema_fragments.hpp"

namespace gpuadmit::config::schema {

Json quantity() {
  // k8s.io/apimachinery/pkg/api/resource's OpenAPI pattern; YAML reads a bare 8 as a number.
  return {
      {"type", Json::array({"string", "number"})},
      {"pattern",
       R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)"}};
}

Json string_list() {
  return {{"type", "array"}, {"items", {{"type", "string"}}}};
}

Json string_map() {
  return {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}};
}

Json closed_object(Json properties) {
  return {{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(properties)}};
}

Json tolerations() {
  Json toleration = closed_object(
      {{"key", {{"type", "string"}}},
       {"operator", {{"type", "string"}, {"enum", Json::array({"Exists", "Equal"})}}},
       {"value", {{"type", "string"}}},
       {"effect",
        {{"type", "string"}, {"enum", Json::array({"NoSchedule", "PreferNoSchedule", "NoExecute"})}}},
       {"tolerationSeconds", {{"type", "integer"}, {"minimum", 0}}}});
  return {{"type", "array"}, {"items", std::move(toleration)}};
}

Json described(Json schema, const PolicyDescriptions& docs, std::string_view path) {
  if (const auto it = docs.find(path); it != docs.end()) {
    // The description goes first, where a reader of the schema looks for it.
    Json out = {{"description", it->second}};
    for (auto& [key, value] : schema.items()) out[key] = std::move(value);
    return out;
  }
  return schema;
}

}  // namespace gpuadmit::config::schema
