#include "gpuadmit/config/policy_schema.hpp"

#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "policy_docs.hpp"
#include "rule_schema.hpp"
#include "schema_fragments.hpp"

namespace gpuadmit::config {
namespace {

using schema::closed_object;
using schema::described;
using schema::Json;

// The keys below mirror the policy loader's (policy_loader.cpp, presets_reader.cpp, workloads_reader.cpp);
// tests/config/policy_schema_check.py holds the schema to the loader's verdicts on every policy we have.

Json workloads(const PolicyDescriptions& docs) {
  const auto field = [&](std::string_view key, Json s) {
    return described(std::move(s), docs, "spec.workloads[]." + std::string(key));
  };
  Json kinds = schema::string_list();
  kinds["minItems"] = 1;
  kinds["items"]["not"] = {{"enum", Json::array({"Pod", "PersistentVolumeClaim"})}};
  // The path grammar of workload_path.hpp; the loader's errors point at the bad character.
  const Json path = {{"type", "string"},
                     {"pattern", R"(^[A-Za-z0-9_*-]+(\[[^\[\]]+\])?(\.[A-Za-z0-9_*-]+(\[[^\[\]]+\])?)*$)"}};
  const Json count = {{"type", Json::array({"integer", "string"})}};
  Json replicas_object = closed_object({
      {"count", count},
      {"absent", {{"type", "integer"}, {"minimum", 0}}},
      {"min", {{"type", "string"}}},
      {"max", {{"type", "string"}}},
      {"times", {{"type", "array"}, {"items", count}}},
  });
  replicas_object["type"] = Json::array({"integer", "string", "object"});
  replicas_object["required"] = Json::array({"count"});
  Json site = closed_object({
      {"template", field("pods[].template", path)},
      {"podSpec", field("pods[].podSpec", path)},
      {"name", field("pods[].name", {{"type", "string"}})},
      {"replicas", field("pods[].replicas", replicas_object)},
      {"containers", field("pods[].containers", schema::string_list())},
      {"resources", field("pods[].resources", {{"type", "string"}, {"pattern", "^[A-Za-z0-9_-]+$"}})},
      {"fields", field("pods[].fields", schema::string_list())},
      {"metadata", field("pods[].metadata", schema::string_list())},
      {"partial", field("pods[].partial", {{"type", "boolean"}})},
      {"partialIf", field("pods[].partialIf", schema::string_list())},
  });
  site["oneOf"] =
      Json::array({{{"required", Json::array({"template"})}}, {{"required", Json::array({"podSpec"})}}});
  Json workload = closed_object({
      {"apiGroup", field("apiGroup", {{"type", "string"}})},
      {"kinds", field("kinds", std::move(kinds))},
      {"template", field("template", path)},
      {"replicas", field("replicas", replicas_object)},
      {"pods", field("pods", {{"type", "array"}, {"minItems", 1}, {"items", std::move(site)}})},
      {"concurrent", field("concurrent", {{"type", "boolean"}})},
  });
  workload["required"] = Json::array({"kinds"});
  workload["oneOf"] =
      Json::array({{{"required", Json::array({"template"})}}, {{"required", Json::array({"pods"})}}});
  return described({{"type", "array"}, {"items", std::move(workload)}}, docs, "spec.workloads");
}

Json presets(const PolicyDescriptions& docs) {
  const auto field = [&](std::string_view key, Json s) {
    return described(std::move(s), docs, "spec.presets[]." + std::string(key));
  };
  const auto objects_with = [](Json required) {
    return Json{{"type", "array"}, {"items", {{"type", "object"}, {"required", std::move(required)}}}};
  };
  const Json quantities = {{"type", "object"}, {"additionalProperties", schema::quantity()}};
  Json preset = closed_object({
      {"name", field("name", {{"type", "string"}, {"minLength", 1}})},
      {"selector", closed_object({{"matchLabels", field("selector.matchLabels", schema::string_map())},
                                  {"gpu", field("selector.gpu", {{"type", "boolean"}})}})},
      {"containers", field("containers", {{"type", "string"}, {"enum", Json::array({"gpu", "all"})}})},
      {"env", field("env", objects_with(Json::array({"name"})))},
      {"resources", closed_object({{"requests", field("resources.requests", quantities)},
                                   {"limits", field("resources.limits", quantities)}})},
      {"tolerations", field("tolerations", objects_with(Json::array()))},
      {"nodeSelector", field("nodeSelector", schema::string_map())},
      {"volumes", field("volumes", objects_with(Json::array({"name"})))},
      {"volumeMounts", field("volumeMounts", objects_with(Json::array({"name", "mountPath"})))},
      {"annotations", field("annotations", schema::string_map())},
  });
  preset["required"] = Json::array({"name", "selector"});
  return described({{"type", "array"}, {"items", std::move(preset)}}, docs, "spec.presets");
}

Json rules(const PolicyDescriptions& docs) {
  Json properties = Json::object();
  for (const policy::RuleEntry& rule : policy::rule_catalogue()) {
    properties[std::string(rule.id)] = schema::rule_schema(rule, default_rule_set(), docs);
  }
  return closed_object(std::move(properties));
}

Json spec(const PolicyDescriptions& docs) {
  Json gpu_resources = schema::string_list();
  // An extended resource name (it has a /), a * only at the end.
  gpu_resources["items"]["pattern"] = R"(^[^*]*/[^*]*\*?$)";
  const Json on_stale = {{"type", "string"}, {"enum", Json::array({"warn", "enforce", "skip"})}};
  return closed_object({
      {"gpuResources", described(std::move(gpu_resources), docs, "spec.gpuResources")},
      {"excludedNamespaces", described(schema::string_list(), docs, "spec.excludedNamespaces")},
      {"cluster", closed_object({{"onStale", described(on_stale, docs, "spec.cluster.onStale")}})},
      {"workloads", workloads(docs)},
      {"presets", presets(docs)},
      {"rules", rules(docs)},
  });
}

}  // namespace

nlohmann::ordered_json policy_schema() {
  const PolicyDescriptions docs = read_policy_docs(policy_docs_markdown());
  Json root = {
      {"$schema", "http://json-schema.org/draft-07/schema#"},
      {"title", "gpuadmit policy (gpuadmit.io/v1alpha1, kind Policy)"},
      {"description",
       "Generated by `gpuadmit policy schema` from the rule catalogue and docs/policy.md. A policy names "
       "only "
       "what it changes; `gpuadmit policy validate` has the last word."},
  };
  Json body = closed_object({
      {"apiVersion", {{"type", "string"}, {"enum", Json::array({"gpuadmit.io/v1alpha1"})}}},
      {"kind", {{"type", "string"}, {"enum", Json::array({"Policy"})}}},
      {"metadata", closed_object({{"name", {{"type", "string"}}},
                                  {"labels", schema::string_map()},
                                  {"annotations", schema::string_map()}})},
      {"spec", spec(docs)},
  });
  body["required"] = Json::array({"apiVersion", "kind"});
  for (auto& [key, value] : body.items()) root[key] = std::move(value);
  return root;
}

}  // namespace gpuadmit::config
