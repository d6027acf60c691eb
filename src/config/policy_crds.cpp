#include "gpuadmit/config/policy_crds.hpp"

#include <algorithm>
#include <string>

#include "gpuadmit/config/policy_schema.hpp"

namespace gpuadmit::config {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kGroup = "gpuadmit.io";

Json status_schema() {
  Json condition = {{"type", "object"},
                    {"required", Json::array({"type", "status"})},
                    {"properties",
                     {{"type", {{"type", "string"}}},
                      {"status", {{"type", "string"}, {"enum", Json::array({"True", "False", "Unknown"})}}},
                      {"reason", {{"type", "string"}}},
                      {"message", {{"type", "string"}}},
                      {"observedGeneration", {{"type", "integer"}}},
                      {"lastTransitionTime", {{"type", "string"}, {"format", "date-time"}}}}}};
  return {{"type", "object"},
          {"description", "What gpuadmit made of this policy: whether it is in force, and why not."},
          {"properties",
           {{"active", {{"type", "boolean"}, {"description", "This policy is the one gpuadmit enforces."}}},
            {"loadedAt", {{"type", "string"}, {"format", "date-time"}}},
            {"observedGeneration", {{"type", "integer"}}},
            {"conditions",
             {{"type", "array"},
              {"items", std::move(condition)},
              {"x-kubernetes-list-type", "map"},
              {"x-kubernetes-list-map-keys", Json::array({"type"})}}}}}};
}

Json crd(const std::string& kind, const std::string& plural, const std::string& scope, Json spec) {
  const Json columns =
      Json::array({{{"name", "Active"}, {"type", "boolean"}, {"jsonPath", ".status.active"}},
                   {{"name", "Loaded"}, {"type", "date"}, {"jsonPath", ".status.loadedAt"}},
                   {{"name", "Reason"},
                    {"type", "string"},
                    {"jsonPath", ".status.conditions[?(@.type==\"Ready\")].reason"}},
                   {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}});
  Json version = {{"name", "v1alpha1"},
                  {"served", true},
                  {"storage", true},
                  {"subresources", {{"status", Json::object()}}},
                  {"additionalPrinterColumns", columns},
                  {"schema",
                   {{"openAPIV3Schema",
                     {{"type", "object"},
                      {"properties",
                       {{"apiVersion", {{"type", "string"}}},
                        {"kind", {{"type", "string"}}},
                        {"metadata", {{"type", "object"}}},
                        {"spec", std::move(spec)},
                        {"status", status_schema()}}}}}}}};
  std::string singular = plural.substr(0, plural.size() - 3) + "y";  // ...policies → ...policy
  return {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", plural + "." + kGroup}}},
      {"spec",
       {{"group", kGroup},
        {"scope", scope},
        {"names", {{"kind", kind}, {"listKind", kind + "List"}, {"plural", plural}, {"singular", singular}}},
        {"versions", Json::array({std::move(version)})}}}};
}

}  // namespace

Json structural(const Json& schema) {
  if (schema.is_array()) {
    Json out = Json::array();
    for (const Json& item : schema) out.push_back(structural(item));
    return out;
  }
  if (!schema.is_object()) return schema;
  // A member that is a number, a string or an object (a workload's replicas): the loader reads it, the API
  // server keeps it as written.
  if (const auto type = schema.find("type"); type != schema.end() && type->is_array() &&
                                             std::find(type->begin(), type->end(), "object") != type->end()) {
    Json out = {{"x-kubernetes-preserve-unknown-fields", true}};
    if (schema.contains("description")) out["description"] = schema["description"];
    return out;
  }
  Json out = Json::object();
  for (const auto& [key, value] : schema.items()) {
    // Draft-07 keywords the API server does not take, and defaults: the API server would write them into
    // stored objects, and a team policy's defaults would then read as explicit (looser) settings.
    if (key == "$schema" || key == "title" || key == "default" || key == "not") continue;
    if (key == "additionalProperties" && value.is_boolean())
      continue;  // unknown fields: strict field validation
    if (key == "required" && value.is_array() && value.empty()) continue;
    if (key == "type" && value.is_array()) {  // a quantity: 8Gi or 8
      out["x-kubernetes-int-or-string"] = true;
      out["anyOf"] = Json::array({{{"type", "integer"}}, {{"type", "string"}}});
      continue;
    }
    // Members whose names are data (rule ids, map keys), not keywords: copied as they are, each value made
    // structural.
    if (key == "properties" || key == "patternProperties") {
      Json members = Json::object();
      for (const auto& [name, sub] : value.items()) members[name] = structural(sub);
      out[key] = std::move(members);
      continue;
    }
    out[key] = structural(value);
  }
  // An object that names no properties (a preset's env entry, volume, toleration) is a Kubernetes object
  // gpuadmit copies as it is.
  if (out.value("type", "") == "object" && !out.contains("properties") &&
      !out.contains("additionalProperties"))
    out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

Json policy_crds() {
  const Json policy = policy_schema();
  const Json& spec = policy["properties"]["spec"];
  Json team = {{"type", "object"},
               {"description",
                "A namespace's own rules: they may only tighten the cluster's (a stricter action, a higher "
                "floor)."},
               {"properties", {{"rules", spec["properties"]["rules"]}}}};
  return {{"apiVersion", "v1"},
          {"kind", "List"},
          {"items", Json::array({crd("ClusterGPUPolicy", "clustergpupolicies", "Cluster", structural(spec)),
                                 crd("GPUPolicy", "gpupolicies", "Namespaced", structural(team))})}};
}

}  // namespace gpuadmit::config
