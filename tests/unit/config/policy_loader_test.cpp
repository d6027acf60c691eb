#include <catch2/catch.hpp>

#include "gpuadmit/policy/catalogue.hpp"

#include "gpuadmit/config/policy_loader.hpp"

using gpuadmit::config::load_policy;
using gpuadmit::policy::Action;

TEST_CASE("the embedded default policy loads and equals the built-in defaults", "[policy-yaml]") {
  auto rules = load_policy(gpuadmit::config::default_policy_yaml(), "<embedded>");
  REQUIRE(rules.ok());
  CHECK(*rules == gpuadmit::policy::RuleSet{});
}

TEST_CASE("a policy overrides only what it names", "[policy-yaml]") {
  auto rules = load_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
metadata: {name: strict}
spec:
  excludedNamespaces: [kube-system, gpuadmit]
  rules:
    guaranteed-qos: {action: enforce, strategy: lower-limits, defaults: {memoryPerGpu: 48Gi}}
    memory-floor: {action: enforce, safetyPercent: 150}
    gpu-tolerations:
      tolerations: [{key: example.com/accelerator, operator: Equal, value: h100, effect: NoSchedule}]
)",
                           "strict.yaml");
  REQUIRE(rules.ok());
  CHECK(rules->guaranteed_qos.strategy == gpuadmit::policy::QosStrategy::kLowerLimits);
  CHECK(rules->guaranteed_qos.memory_per_gpu.to_string() == "48Gi");
  CHECK(rules->guaranteed_qos.cpu_per_gpu.to_string() == "8");
  CHECK(rules->memory_floor.action == Action::kEnforce);
  CHECK(rules->memory_floor.safety_percent == 150);
  CHECK(rules->gpu_tolerations.tolerations.at(0).value == "h100");
  CHECK(rules->is_excluded("gpuadmit"));
  CHECK(rules->gpu_whole_units.action == Action::kEnforce);
}

TEST_CASE("invalid policies are rejected with file:line:column and what was expected", "[policy-yaml]") {
  const std::string header = "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n";
  auto [body, expected] = GENERATE(table<std::string, std::string>({
      {"  rules:\n    gpu-whole-units: {action: block}\n",
       "p.yaml:5:31: spec.rules.gpu-whole-units.action: expected one of enforce, warn, audit, off, got "
       "\"block\""},
      {"  rules:\n    gpu-whole-unit: {action: warn}\n",
       "p.yaml:5:5: spec.rules: unknown rule \"gpu-whole-unit\" (known rules: gpu-intent"},
      {"  rulez: {}\n",
       "p.yaml:4:3: spec: unknown key \"rulez\" (expected one of: gpuResources, excludedNamespaces, cluster, "
       "rules, presets, workloads)"},
      {"  excludedNamespaces: kube-system\n",
       "p.yaml:4:23: spec.excludedNamespaces: expected a list of strings"},
      {"  rules:\n    memory-floor: {perGpu: lots}\n",
       "p.yaml:5:28: spec.rules.memory-floor.perGpu: expected a quantity such as 8, 500m or 32Gi"},
      {"  rules:\n    memory-floor: {safetyPercent: 50}\n",
       "p.yaml:5:35: spec.rules.memory-floor.safetyPercent: expected a whole number from 100 to 1000"},
      {"  rules:\n    guaranteed-qos: {strategy: raise}\n",
       "spec.rules.guaranteed-qos.strategy: expected one of raise-requests, lower-limits, deny, got "
       "\"raise\""},
      {"  gpuResources: [gpu]\n", "spec.gpuResources[0]: expected an extended resource name"},
      {"  rules:\n    gpu-tolerations: {tolerations: [{key: a, operator: Exists, value: b}]}\n",
       "a toleration with operator Exists must not have a value"},
      {"  rules: [a]\n", "spec.rules: expected a mapping of rule id to its settings"},
      {"  rules:\n    gpu-intent: {action: [warn]}\n", "spec.rules.gpu-intent.action: expected a string"},
  }));
  CAPTURE(body);
  auto rules = load_policy(header + body, "p.yaml");
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains(expected));
}

TEST_CASE("every error in a policy is reported, not only the first", "[policy-yaml]") {
  auto rules = load_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
spec:
  rules:
    gpu-whole-units: {action: nope}
    memory-floor: {overhead: -1Gi}
)",
                           "p.yaml");
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains("p.yaml:5:31"));
  CHECK_THAT(rules.error().message, Catch::Contains("p.yaml:6:30"));
}

TEST_CASE("a rule's errors come in reading order: its unknown keys first, then its values, then a section's",
          "[policy-yaml]") {
  auto rules = load_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
spec:
  rules:
    guaranteed-qos:
      action: maybe
      bogus: 1
      defaults:
        cpuPerGpu: -1
        extra: x
    shm-size: {minimum: 10Gi, maximum: 1Gi}
    node-fit: 3
)",
                           "p.yaml");
  REQUIRE_FALSE(rules.ok());
  CHECK(
      rules.error().message ==
      "p.yaml:7:7: spec.rules.guaranteed-qos: unknown key \"bogus\" (expected one of: action, strategy, "
      "defaults)\n"
      "p.yaml:6:15: spec.rules.guaranteed-qos.action: expected one of enforce, warn, audit, off, got "
      "\"maybe\"\n"
      "p.yaml:10:9: spec.rules.guaranteed-qos.defaults: unknown key \"extra\" (expected one of: cpuPerGpu, "
      "memoryPerGpu, cpuOtherContainers, memoryOtherContainers)\n"
      "p.yaml:9:20: spec.rules.guaranteed-qos.defaults.cpuPerGpu: expected a quantity greater than zero, got "
      "-1\n"
      "p.yaml:11:15: spec.rules.shm-size: minimum is larger than maximum\n"
      "p.yaml:12:15: spec.rules.node-fit: expected a mapping");
}

TEST_CASE("every rule in the catalogue reads its settings and names its keys", "[policy-yaml]") {
  const std::string header = "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  rules:\n";
  for (const auto& rule : gpuadmit::policy::rule_catalogue()) {
    INFO(rule.id);
    auto off = load_policy(header + "    " + std::string(rule.id) + ": {action: off}\n", "p.yaml");
    REQUIRE(off.ok());
    CHECK(off->action_of(rule.id) == gpuadmit::policy::Action::kOff);
    auto unknown = load_policy(header + "    " + std::string(rule.id) + ": {nosuchkey: 1}\n", "p.yaml");
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().message,
               Catch::Contains("unknown key \"nosuchkey\" (expected one of: action"));
  }
}

TEST_CASE("gpu-type's aliases replace the defaults and match whatever their case", "[policy-yaml]") {
  auto rules = load_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
spec:
  rules:
    gpu-type:
      aliases: {A100X: ["*A100-SXM4-80GB*"]}
)",
                           "p.yaml");
  REQUIRE(rules.ok());
  CHECK(rules->gpu_type.aliases == gpuadmit::policy::StringLists{{"a100x", {"*A100-SXM4-80GB*"}}});
}

TEST_CASE("wrong apiVersion, kind and malformed YAML are errors", "[policy-yaml]") {
  CHECK_THAT(load_policy("apiVersion: v1\nkind: Policy\n", "p.yaml").error().message,
             Catch::Contains("p.yaml:1:13: apiVersion: expected gpuadmit.io/v1alpha1"));
  CHECK_THAT(load_policy("apiVersion: gpuadmit.io/v1alpha1\nkind: ConfigMap\n", "p.yaml").error().message,
             Catch::Contains("kind: expected Policy"));
  CHECK_THAT(load_policy("spec: [unclosed\n", "p.yaml").error().message, Catch::StartsWith("p.yaml:"));
  CHECK_THAT(load_policy(std::string(2 * 1024 * 1024, '#'), "big.yaml").error().message,
             Catch::Contains("exceeds the limit of 1048576 bytes"));
}

TEST_CASE("a stray comma after the policy is an error at its line, not an endless load", "[policy-yaml]") {
  // yaml-cpp 0.7's LoadAll never returns on it (the fuzz finding tests/fuzz/corpus/policy/crash-yaml-cpp-*):
  // a policy reload or `gpuadmit check` would hang and grow until killed.
  const auto policy =
      load_policy("apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec: {}\n...\n,\n", "p.yaml");
  REQUIRE_FALSE(policy.ok());
  CHECK_THAT(policy.error().message, Catch::StartsWith("p.yaml:5:1: unexpected token here"));
}

TEST_CASE("a policy object from the API server loads as its spec, errors named by object and field path",
          "[policy-yaml][policy-object]") {
  // name, the object (JSON, as the API server returns it), the error ("" when it loads)
  auto [name, object, error] = GENERATE(table<std::string, std::string, std::string>({
      {"a ClusterGPUPolicy with the server's metadata loads",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "ClusterGPUPolicy",
           "metadata": {"name": "strict", "uid": "u", "resourceVersion": "7", "generation": 2,
                        "managedFields": [{"manager": "kubectl"}]},
           "spec": {"rules": {"memory-floor": {"action": "enforce", "perGpu": 16}}},
           "status": {"active": true}})",
       ""},
      {"a GPUPolicy with rules loads",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "GPUPolicy", "metadata": {"name": "team", "namespace": "ml"},
           "spec": {"rules": {"memory-floor": {"action": "enforce"}}}})",
       ""},
      {"a misspelt parameter names the object and the path, no line",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "ClusterGPUPolicy", "metadata": {"name": "p"},
           "spec": {"rules": {"memory-floor": {"perGPU": "8Gi"}}}})",
       "ClusterGPUPolicy/p: spec.rules.memory-floor: unknown key \"perGPU\""},
      {"a wrong action names its field",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "ClusterGPUPolicy", "metadata": {"name": "p"},
           "spec": {"rules": {"memory-floor": {"action": "enforced"}}}})",
       "ClusterGPUPolicy/p: spec.rules.memory-floor.action: expected one of enforce, warn, audit, off"},
      {"a GPUPolicy that sets more than rules is refused",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "GPUPolicy", "metadata": {"name": "t"},
           "spec": {"gpuResources": ["x.com/gpu"]}})",
       "GPUPolicy/t: spec.gpuResources: a GPUPolicy sets rules only"},
      {"another kind is refused",
       R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "Policy", "metadata": {"name": "x"}, "spec": {}})",
       "Policy/x: expected apiVersion gpuadmit.io/v1alpha1 and kind ClusterGPUPolicy or GPUPolicy"},
  }));
  INFO(name);
  const auto rules = gpuadmit::config::load_policy_object(nlohmann::json::parse(object));
  if (error.empty()) {
    REQUIRE(rules.ok());
    CHECK(rules->memory_floor.action == Action::kEnforce);
  } else {
    REQUIRE_FALSE(rules.ok());
    CHECK_THAT(rules.error().message, Catch::StartsWith(error));
  }
}

TEST_CASE("a GPUPolicy may only tighten the cluster policy: stricter actions, higher floors",
          "[policy-yaml][policy-object]") {
  // The cluster policy it tightens: memory-floor warns with an 8Gi floor per GPU.
  gpuadmit::policy::RuleSet cluster;
  cluster.memory_floor.action = Action::kWarn;
  // name, the GPUPolicy's spec.rules (JSON), the error ("" when it applies)
  auto [name, rules_json, error] = GENERATE(table<std::string, std::string, std::string>({
      {"a stricter action applies", R"({"memory-floor": {"action": "enforce"}})", ""},
      {"the same action applies", R"({"memory-floor": {"action": "warn", "perGpu": "16Gi"}})", ""},
      {"a higher floor applies", R"({"memory-floor": {"perGpu": "16Gi", "safetyPercent": 150}})", ""},
      {"a looser action is refused with the cluster's value", R"({"memory-floor": {"action": "audit"}})",
       "GPUPolicy team-a/strict: spec.rules.memory-floor.action: audit is looser than the cluster policy's "
       "warn; a GPUPolicy may only make a rule stricter"},
      {"a lower floor is refused with the cluster's value", R"({"memory-floor": {"perGpu": "4Gi"}})",
       "GPUPolicy team-a/strict: spec.rules.memory-floor.perGpu: 4Gi is below the cluster policy's 8Gi; a "
       "GPUPolicy may only raise a floor"},
      {"a setting that is not a floor is the cluster's", R"({"gpu-intent": {"resource": "amd.com/gpu"}})",
       "GPUPolicy team-a/strict: spec.rules.gpu-intent.resource: a GPUPolicy may set only action here; "
       "resource is the cluster policy's"},
      {"a rule with floors names them", R"({"shm-size": {"minimum": "1Gi"}})",
       "GPUPolicy team-a/strict: spec.rules.shm-size.minimum: a GPUPolicy may set only action here"},
      {"a section is the cluster's", R"({"guaranteed-qos": {"defaults": {"cpuPerGpu": 4}}})",
       "GPUPolicy team-a/strict: spec.rules.guaranteed-qos.defaults: a GPUPolicy may set only action here"},
      {"the loader's own checks still apply", R"({"memory-floor": {"perGPU": "16Gi"}})",
       "GPUPolicy team-a/strict: spec.rules.memory-floor: unknown key \"perGPU\""},
  }));
  INFO(name);
  const auto object = nlohmann::json{{"apiVersion", "gpuadmit.io/v1alpha1"},
                                     {"kind", "GPUPolicy"},
                                     {"metadata", {{"name", "strict"}, {"namespace", "team-a"}}},
                                     {"spec", {{"rules", nlohmann::json::parse(rules_json)}}}};
  const auto tightened = gpuadmit::config::load_policy_object(object, &cluster);
  if (error.empty()) {
    REQUIRE(tightened.ok());
    CHECK(tightened->memory_floor.action >= cluster.memory_floor.action);
    CHECK(tightened->memory_floor.per_gpu >= cluster.memory_floor.per_gpu);
    CHECK(tightened->guaranteed_qos == cluster.guaranteed_qos);  // the rest is the cluster's
  } else {
    REQUIRE_FALSE(tightened.ok());
    CHECK_THAT(tightened.error().message, Catch::StartsWith(error));
    CHECK(tightened.error().message.find('\n') == std::string::npos);  // that one problem, nothing else
  }
}

TEST_CASE("a GPUPolicy tightens the cluster policy it is given, not the defaults", "[policy-object]") {
  gpuadmit::policy::RuleSet cluster;
  cluster.excluded_namespaces = {"only-this"};
  cluster.memory_floor.per_gpu =
      gpuadmit::k8s::Quantity::from_units(20LL << 30, gpuadmit::k8s::Quantity::Format::kBinarySI);
  const auto tightened = gpuadmit::config::load_policy_object(
      nlohmann::json::parse(R"({"apiVersion": "gpuadmit.io/v1alpha1", "kind": "GPUPolicy",
        "metadata": {"name": "t", "namespace": "a"}, "spec": {"rules": {"memory-floor": {"perGpu": "16Gi"}}}})"),
      &cluster);
  REQUIRE_FALSE(tightened.ok());
  CHECK_THAT(tightened.error().message, Catch::Contains("below the cluster policy's 20Gi"));
}
