#include <catch2/catch.hpp>

#include <algorithm>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/k8s/qos.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/policy/text.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Action;
using gpuadmit::policy::Mode;
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

TEST_CASE("every mutated GPU fixture ends up Guaranteed with a cluster view to size from", "[rules][qos]") {
  auto name =
      GENERATE("pods/vit-b-burstable.yaml", "pods/gpu-request-without-limit.yaml", "pods/good-gpu-pod.yaml",
               "pods/gpu-pod-with-sidecar.yaml", "pods/four-gpu-script-one-gpu.yaml");
  INFO(name);
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto r = gpuadmit::test::check(gpuadmit::test::fixture(name), RuleSet{}, &view);
  auto fixed = gpuadmit::k8s::parse_pod(r.fixed);
  REQUIRE(fixed.ok());
  CHECK(gpuadmit::k8s::compute_qos(*fixed) == gpuadmit::k8s::QosClass::kGuaranteed);
}

TEST_CASE("guaranteed-qos strategies decide what a request below its limit becomes", "[rules][qos]") {
  const json burstable = pod_with_spec(
      "  containers: [{name: a, resources: {requests: {cpu: 2, memory: 4Gi}, limits: {cpu: 4, memory: "
      "8Gi, nvidia.com/gpu: 1}}}]");
  RuleSet rules;
  SECTION("raise-requests raises requests to the limits, when a node in view holds them") {
    const auto view = gpuadmit::test::view_of("gpu-cluster");
    const auto r = gpuadmit::test::check(burstable, rules, &view);
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["requests"]["memory"] == "8Gi");
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "4");
  }
  SECTION("raise-requests without a cluster view leaves the requests and warns") {
    const auto r = check(burstable, rules);
    CHECK(r.allowed);
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["requests"]["memory"] == "4Gi");
    CHECK_THAT(warnings_text(r),
               Catch::Contains("guaranteed-qos: GPU pod left Burstable: cpu request < limit; no "
                               "cluster view to check a node holds the limit"));
  }
  SECTION("lower-limits lowers limits to the requests") {
    rules.guaranteed_qos.strategy = gpuadmit::policy::QosStrategy::kLowerLimits;
    const auto r = check(burstable, rules);
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["memory"] == "4Gi");
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "2");
  }
  SECTION("deny refuses the pod and explains") {
    rules.guaranteed_qos.strategy = gpuadmit::policy::QosStrategy::kDeny;
    const auto r = check(burstable, rules);
    CHECK_FALSE(r.allowed);
    REQUIRE(rules_of(r.violations) == std::vector<std::string>{"guaranteed-qos"});
    CHECK_THAT(r.violations[0].message, Catch::Contains("memory request 4Gi is below its limit 8Gi"));
    CHECK_THAT(r.violations[0].message, Catch::Contains("QoS class Burstable"));
  }
  SECTION("warn leaves the pod as it is and warns") {
    rules.guaranteed_qos.action = Action::kWarn;
    const auto view = gpuadmit::test::view_of("gpu-cluster");
    const auto r = gpuadmit::test::check(burstable, rules, &view);
    CHECK(r.allowed);
    CHECK(r.fixed["spec"]["containers"][0]["resources"]["requests"]["memory"] == "4Gi");
    CHECK_THAT(warnings_text(r), Catch::Contains("guaranteed-qos: GPU pod is not Guaranteed QoS"));
  }
}

TEST_CASE("containers with no cpu or memory get the policy's per-GPU defaults and a notice", "[rules][qos]") {
  // The A100 nodes of the view hold more per GPU than the defaults (64 cpu, 512Gi for 4 GPUs).
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto r = gpuadmit::test::check(
      pod_with_spec("  containers: [{name: a, resources: {limits: {nvidia.com/gpu: 2}}}]"), RuleSet{}, &view);
  const json& resources = r.fixed["spec"]["containers"][0]["resources"];
  CHECK(resources["limits"]["cpu"] == "16");
  CHECK(resources["requests"]["memory"] == "64Gi");
  CHECK_THAT(warnings_text(r), Catch::Contains("gpuadmit set cpu 16, memory 64Gi (policy default per GPU)"));
}

TEST_CASE("a request above its limit is denied even by raise-requests", "[rules][qos]") {
  const auto r = check(
      pod_with_spec("  containers: [{name: a, resources: {requests: {cpu: 8}, limits: {cpu: 4, memory: 1Gi, "
                    "nvidia.com/gpu: 1}}}]"));
  CHECK_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message, Catch::Contains("cpu request 8 exceeds its limit 4"));
}

TEST_CASE("gpu-tolerations adds the policy toleration only when none covers it", "[rules][tolerations]") {
  auto [tolerations, added] = GENERATE(table<const char*, bool>({
      {"[]", true},
      {"[{key: nvidia.com/gpu, operator: Exists}]", false},
      {"[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", false},
      {"[{operator: Exists}]", false},
      {"[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]", true},
      {"[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]", true},
      {"[{key: other, operator: Exists}]", true},
  }));
  CAPTURE(tolerations);
  const auto r = check(pod_with_spec(
      std::string("  tolerations: ") + tolerations +
      "\n  containers: [{name: a, resources: {limits: {cpu: 1, memory: 16Gi, nvidia.com/gpu: 1}}}]"));
  const json wanted = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  const std::size_t original = gpuadmit::test::yaml(std::string("t: ") + tolerations)["t"].size();
  const json& stored = r.fixed["spec"]["tolerations"];
  CHECK(stored.size() == original + (added ? 1U : 0U));
  if (added) CHECK(stored.back() == wanted);
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

TEST_CASE("gpu-intent in enforce mode adds one GPU to the container that runs a GPU image", "[rules]") {
  RuleSet rules;
  rules.gpu_intent.action = Action::kEnforce;
  const auto r = check(gpuadmit::test::fixture("pods/resnet50-no-gpu.yaml"), rules);
  CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  CHECK(r.fixed["spec"]["tolerations"].size() == 1);  // it is a GPU pod now, so it gets the toleration too
}

TEST_CASE("gpu-intent recognises the label that says GPU", "[rules]") {
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {gpu-training: "true"}}
spec: {containers: [{name: a, image: mycorp/trainer:1}]}
)"));
  CHECK_THAT(warnings_text(r), Catch::Contains("is in a pod labelled gpu-training=true but requests no GPU"));
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
