// The policy's JSON Schema: its descriptions come from docs/policy.md, its settings from the rules' readers.
// (That the schema and the loader agree on real policies is tests/config/policy_schema_check.py.)
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../../../src/config/policy_docs.hpp"
#include "gpuadmit/config/policy_crds.hpp"
#include "gpuadmit/config/policy_schema.hpp"
#include "gpuadmit/policy/catalogue.hpp"

namespace gpuadmit::config {
namespace {

struct DocsCase {
  const char* name;
  const char* markdown;
  const char* key;
  const char* description;  // nullptr: no description for the key
};

const std::vector<DocsCase> kDocsCases = {
    {"a top-level setting is described by its meaning and default",
     "## Top-level settings\n\n| key | default | meaning |\n| --- | --- | --- |\n"
     "| `spec.gpuResources` | `nvidia.com/gpu` | extended resources that are GPUs |\n",
     "spec.gpuResources", "extended resources that are GPUs (default: nvidia.com/gpu)"},
    {"a rule is described by the paragraph that opens its section",
     "## Rules\n\n### `shm-size`\n\nDefault action: **enforce**. Container runtimes give\na container 64 "
     "MiB.\n\n"
     "More text.\n",
     "spec.rules.shm-size", "Default action: enforce. Container runtimes give a container 64 MiB."},
    {"a rule's action names its default", "## Rules\n\n### `shm-size`\n\nDefault action: **warn**. Text.\n",
     "spec.rules.shm-size.action",
     "enforce (fix when safe, deny what is still wrong), warn (allow with a Warning), audit (log and count "
     "only) or off (default: warn)"},
    {"a parameter without a meaning column is described by its default",
     "## Rules\n\n### `shm-size`\n\n| parameter | default |\n| --- | --- |\n| `minimum` | `1Gi` |\n",
     "spec.rules.shm-size.minimum", "Default: 1Gi."},
    {"a parameter of a section keeps its dotted name",
     "## Rules\n\n### `guaranteed-qos`\n\n| parameter | default | meaning |\n| --- | --- | --- |\n"
     "| `defaults.cpuPerGpu` | `8` | cpu per GPU |\n",
     "spec.rules.guaranteed-qos.defaults.cpuPerGpu", "cpu per GPU (default: 8)"},
    {"a link keeps its text",
     "## Top-level settings\n\n| key | default | meaning |\n| --- | --- | --- |\n"
     "| `spec.presets` | none | bundles, see [`presets`](#presets) |\n",
     "spec.presets", "bundles, see presets (default: none)"},
    {"a preset's keys are under spec.presets[]",
     "## Rules\n\n### `presets`\n\n| preset key | default | meaning |\n| --- | --- | --- |\n"
     "| `selector.gpu` | `false` | selects GPU pods |\n",
     "spec.presets[].selector.gpu", "selects GPU pods (default: false)"},
    {"a table after another paragraph is not the rule's",
     "## Rules\n\n### `x`\n\n| annotation | example | meaning |\n| --- | --- | --- |\n| `a` | `b` | c |\n",
     "spec.rules.x.a", nullptr},
    {"a parameter table outside the rules describes nothing",
     "## Limits\n\n| parameter | default |\n| --- | --- |\n| `size` | `1` |\n", "spec.rules..size", nullptr},
};

TEST_CASE("the docs reader finds each setting's description", "[config][schema]") {
  for (const DocsCase& c : kDocsCases) {
    SECTION(c.name) {
      const PolicyDescriptions docs = read_policy_docs(c.markdown);
      const auto it = docs.find(std::string(c.key));
      if (c.description == nullptr) {
        CHECK(it == docs.end());
      } else {
        REQUIRE(it != docs.end());
        CHECK(it->second == c.description);
      }
    }
  }
}

// The leaves of a schema (settings that are no object of settings), with their paths.
void leaves(const nlohmann::ordered_json& schema, const std::string& path, std::vector<std::string>& out,
            std::vector<std::string>& undescribed) {
  if (schema.contains("properties")) {
    for (const auto& [key, child] : schema["properties"].items())
      leaves(child, path + "." + key, out, undescribed);
    return;
  }
  out.push_back(path);
  if (!schema.contains("description")) undescribed.push_back(path);
}

TEST_CASE("every rule and every rule parameter in the schema is described by docs/policy.md",
          "[config][schema]") {
  const nlohmann::ordered_json schema = policy_schema();
  const auto& rules = schema["properties"]["spec"]["properties"]["rules"]["properties"];
  std::vector<std::string> all;
  std::vector<std::string> undescribed;
  for (const policy::RuleEntry& rule : policy::rule_catalogue()) {
    const std::string id(rule.id);
    INFO(id);
    REQUIRE(rules.contains(id));
    CHECK(rules[id].contains("description"));
    CHECK(rules[id]["properties"]["action"]["enum"] ==
          nlohmann::ordered_json::array({"enforce", "warn", "audit", "off"}));
    leaves(rules[id], "spec.rules." + id, all, undescribed);
  }
  CHECK(all.size() >= 40);  // the catalogue's rules have about 40 settings in all
  CHECK(undescribed.empty());
  for (const std::string& path : undescribed) UNSCOPED_INFO(path);
}

TEST_CASE("a rule's settings carry the range, choices and default its reader gives", "[config][schema]") {
  const nlohmann::ordered_json schema = policy_schema();
  const auto& rules = schema["properties"]["spec"]["properties"]["rules"]["properties"];
  const auto& safety = rules["memory-floor"]["properties"]["safetyPercent"];
  CHECK(safety["type"] == "integer");
  CHECK(safety["minimum"] == 100);
  CHECK(safety["maximum"] == 1000);
  CHECK(safety["default"] == 150);
  CHECK(rules["memory-floor"]["properties"]["action"]["default"] == "warn");
  CHECK(rules["guaranteed-qos"]["properties"]["strategy"]["enum"] ==
        nlohmann::ordered_json::array({"raise-requests", "lower-limits", "deny"}));
  CHECK(rules["guaranteed-qos"]["properties"]["defaults"]["properties"]["memoryPerGpu"]["default"] == "32Gi");
  CHECK(rules["memory-floor"]["additionalProperties"] == false);
}

}  // namespace
}  // namespace gpuadmit::config

namespace gpuadmit::config {
namespace {

struct StructuralCase {
  const char* name;
  const char* schema;
  const char* structural;
};

const std::vector<StructuralCase> kStructuralCases = {
    {"draft-07 keywords and defaults are dropped",
     R"({"$schema": "x", "title": "t", "type": "string", "default": "a"})", R"({"type":"string"})"},
    {"a closed object keeps its properties (strict field validation refuses unknown ones)",
     R"({"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}}})",
     R"({"type":"object","properties":{"a":{"type":"string"}}})"},
    {"a quantity becomes int-or-string and keeps its pattern",
     R"({"type": ["string", "number"], "pattern": "^[0-9]+$"})",
     R"({"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}],"pattern":"^[0-9]+$"})"},
    {"an object of unnamed fields keeps them", R"({"type": "object", "required": ["name"]})",
     R"({"type":"object","required":["name"],"x-kubernetes-preserve-unknown-fields":true})"},
    {"a map keeps its value schema", R"({"type": "object", "additionalProperties": {"type": "string"}})",
     R"({"type":"object","additionalProperties":{"type":"string"}})"},
    {"an empty required list is dropped", R"({"type": "object", "required": [], "properties": {}})",
     R"({"type":"object","properties":{}})"},
    {"a property named like a keyword is kept",
     R"({"type": "object", "properties": {"default": {"type": "string", "not": {}}}})",
     R"({"type":"object","properties":{"default":{"type":"string"}}})"},
};

TEST_CASE("the CRDs' schemas are the policy schema made structural", "[config][schema]") {
  for (const StructuralCase& c : kStructuralCases) {
    SECTION(c.name) {
      CHECK(structural(nlohmann::ordered_json::parse(c.schema)).dump() == c.structural);
    }
  }
}

TEST_CASE("a GPUPolicy's spec holds only rules; a ClusterGPUPolicy's holds a policy's spec",
          "[config][schema]") {
  const nlohmann::ordered_json crds = policy_crds();
  REQUIRE(crds["items"].size() == 2);
  const auto spec_of = [&](std::size_t i) {
    return crds["items"][i]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
  };
  CHECK(crds["items"][0]["spec"]["scope"] == "Cluster");
  CHECK(spec_of(0)["properties"].contains("gpuResources"));
  CHECK(crds["items"][1]["spec"]["scope"] == "Namespaced");
  CHECK(spec_of(1)["properties"].size() == 1);
  CHECK(spec_of(1)["properties"].contains("rules"));
  CHECK(crds.dump().find("\"default\":") == std::string::npos);
}

}  // namespace
}  // namespace gpuadmit::config
