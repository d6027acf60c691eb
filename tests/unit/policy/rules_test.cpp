// Cases that no one rule owns: the seed failure modes end to end, what makes a pod a GPU pod, excluded
// namespaces, actions, and what every finding and fix must look like. A rule's own cases are in
// rules/<id>_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gpuadmit/policy/text.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Action;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::check;
using gpuadmit::test::pod_with_spec;
using gpuadmit::test::rules_of;
using gpuadmit::test::warnings_text;
using nlohmann::json;

TEST_CASE("the seed failure modes get the verdict the catalogue promises", "[rules]") {
  struct Case {
    const char* fixture;
    bool allowed;
    std::vector<std::string> violations;
    const char* warning_fragment;  // "" when no warning is expected
  };
  auto c = GENERATE(values<Case>({
      {"pods/fractional-gpu.yaml", false, {"gpu-whole-units"}, ""},
      {"pods/resnet50-no-gpu.yaml",
       true,
       {},
       "gpu-intent: container \"train\" runs a GPU image but requests no GPU"},
      {"pods/four-gpu-script-one-gpu.yaml", true, {}, "runs 4 processes per node on 1 GPU"},
      {"pods/vit-b-burstable.yaml", true, {}, "memory-floor"},
      {"pods/gpu-request-without-limit.yaml", true, {}, ""},
      {"pods/good-gpu-pod.yaml", true, {}, ""},
      {"pods/cpu-pod-with-gpu-toleration.yaml", true, {}, "stray-gpu-toleration"},
  }));
  INFO(c.fixture);
  const auto r = check(gpuadmit::test::fixture(c.fixture));
  CHECK(r.allowed == c.allowed);
  CHECK(rules_of(r.violations) == c.violations);
  if (std::string(c.warning_fragment).empty()) {
    CHECK(std::none_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
      return w.find("memory-floor") == std::string::npos && w.find("guaranteed-qos") == std::string::npos;
    }));
  } else {
    CHECK_THAT(warnings_text(r), Catch::Contains(c.warning_fragment));
  }
}

TEST_CASE("a GPU quantity of zero does not make a GPU pod", "[rules][tolerations]") {
  const auto r = check(pod_with_spec(
      "  containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 0}}}]"));
  CHECK(r.fixes.empty());
  CHECK_FALSE(r.fixed["spec"].contains("tolerations"));
}

TEST_CASE("MIG slices count as GPU resources through the policy's prefix pattern", "[rules]") {
  const auto r = check(pod_with_spec(
      "  containers: [{name: a, resources: {limits: {cpu: 1, memory: 16Gi, nvidia.com/mig-1g.10gb: 1}}}]"));
  CHECK(r.fixed["spec"]["tolerations"].size() == 1);
}

TEST_CASE("a resource is a GPU when it equals a policy name or starts with a pattern's prefix", "[rules]") {
  struct Case {
    std::vector<std::string> patterns;
    std::string name;
    bool gpu;
  };
  const auto c = GENERATE(values<Case>({
      {{"nvidia.com/gpu"}, "nvidia.com/gpu", true},
      {{"nvidia.com/gpu"}, "nvidia.com/gpu.shared", false},
      {{"nvidia.com/gpu"}, "nvidia.com/gp", false},
      {{"nvidia.com/gpu"}, "cpu", false},
      {{"nvidia.com/gpu"}, "", false},
      {{"nvidia.com/mig-*"}, "nvidia.com/mig-1g.5gb", true},
      {{"nvidia.com/mig-*"}, "nvidia.com/mig-", true},
      {{"nvidia.com/mig-*"}, "nvidia.com/mig", false},
      {{"cpu", "nvidia.com/gpu"}, "memory", false},
      {{"amd.com/gpu", "nvidia.com/gpu"}, "nvidia.com/gpu", true},
      {{"*"}, "memory", true},
      {{"*"}, "", true},
      {{""}, "", true},
      {{""}, "cpu", false},
      {{}, "nvidia.com/gpu", false},
  }));
  RuleSet rules;
  rules.gpu_resources = c.patterns;
  CAPTURE(c.patterns, c.name);
  CHECK(rules.is_gpu_resource(c.name) == c.gpu);
}

TEST_CASE("pods in excluded namespaces pass untouched", "[rules]") {
  json object = gpuadmit::test::fixture("pods/fractional-gpu.yaml");
  object["metadata"]["namespace"] = "kube-system";
  const auto r = check(object);
  CHECK(r.allowed);
  CHECK_FALSE(r.checked);
  CHECK(r.patch.empty());
}

TEST_CASE("a rule set to off reports nothing", "[rules]") {
  RuleSet rules;
  rules.gpu_whole_units.action = Action::kOff;
  const auto r = check(gpuadmit::test::fixture("pods/fractional-gpu.yaml"), rules);
  CHECK(r.allowed);
}

TEST_CASE("audit findings allow and are kept apart from warnings", "[rules]") {
  RuleSet rules;
  rules.gpu_whole_units.action = Action::kAudit;
  const auto r = check(gpuadmit::test::fixture("pods/fractional-gpu.yaml"), rules);
  CHECK(r.allowed);
  CHECK(rules_of(r.audits) == std::vector<std::string>{"gpu-whole-units"});
  CHECK_THAT(warnings_text(r), !Catch::Contains("gpu-whole-units"));
}

TEST_CASE("a denial lists every violation, not the first", "[rules]") {
  const auto r = check(pod_with_spec(R"(  containers:
    - {name: a, resources: {limits: {cpu: 1, memory: 16Gi, nvidia.com/gpu: 0.5}}}
    - {name: b, resources: {requests: {nvidia.com/gpu: 1}, limits: {cpu: 1, memory: 16Gi, nvidia.com/gpu: 2}}})"));
  CHECK(rules_of(r.violations) == std::vector<std::string>{"gpu-whole-units", "gpu-limit-equals-request"});
}

TEST_CASE("every warning is one line of at most 120 characters", "[rules]") {
  auto name = GENERATE("pods/resnet50-no-gpu.yaml", "pods/vit-b-burstable.yaml",
                       "pods/gpu-pod-with-sidecar.yaml", "pods/four-gpu-script-one-gpu.yaml",
                       "pods/cpu-pod-with-gpu-toleration.yaml", "pods/fractional-gpu.yaml");
  INFO(name);
  for (const std::string& w : check(gpuadmit::test::fixture(name)).warnings) {
    INFO(w);
    CHECK(gpuadmit::policy::rune_count(w) <= 120);
    CHECK(std::none_of(w.begin(), w.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
  }
}

TEST_CASE("the mutated-by annotation keeps the ids already there, sorted and without repeats", "[rules]") {
  // existing value, ids expected besides this review's fixes
  auto [existing, kept] = GENERATE(table<std::string, std::vector<std::string>>({
      {"zz-other", {"zz-other"}},
      {"zz-other,guaranteed-qos,,zz-other", {"guaranteed-qos", "zz-other"}},
      {"", {}},
      {"aa-first", {"aa-first"}},
  }));
  CAPTURE(existing);
  json object = gpuadmit::test::fixture("pods/vit-b-burstable.yaml");
  object["metadata"]["annotations"]["gpuadmit.io/mutated-by"] = existing;
  const auto r = check(object);
  REQUIRE_FALSE(r.fixes.empty());
  std::vector<std::string> ids = kept;
  for (const auto& f : r.fixes) ids.push_back(f.rule);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string expected;
  for (const auto& id : ids) expected += (expected.empty() ? "" : ",") + id;
  CHECK(r.fixed["metadata"]["annotations"]["gpuadmit.io/mutated-by"] == expected);
}
