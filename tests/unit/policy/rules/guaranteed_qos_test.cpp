// guaranteed-qos: a GPU pod is made Guaranteed by the policy's strategy (raise-requests, lower-limits, deny).
// The sizes it writes must leave the pod fitting a node it could use (no harm), and without a cluster view
// it invents no sizes at all.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/k8s/qos.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::Action;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::check;
using gpuadmit::test::pod_with_spec;
using gpuadmit::test::rules_of;
using gpuadmit::test::view_of;
using gpuadmit::test::warnings_text;
using nlohmann::json;

json qos_pod(const std::string& resources, const std::string& extra = "") {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
)" + extra + R"(
  containers:
    - name: main
      image: nvidia/cuda:12.2.0-base-ubuntu22.04
      resources: )" + resources +
                              "\n");
}

const json& resources_of(const gpuadmit::admission::CheckResult& r) {
  return r.fixed["spec"]["containers"][0]["resources"];
}

}  // namespace

TEST_CASE("guaranteed-qos sizes a container that set nothing from the smallest node it could use",
          "[guaranteed-qos]") {
  // The per-GPU share of the node's allocatable, less a tenth for the DaemonSet pods every node runs,
  // rounded down (cpu to 100m, memory to Gi), and never above the policy's per-GPU defaults.
  auto [cluster, gpus, cpu, memory] = GENERATE(table<std::string, std::string, std::string, std::string>({
      // GKE n1-standard-8 + T4: 7910m and 27107535Ki allocatable; the defaults (8, 32Gi) would fit no node.
      {"gke-t4", "1", "7100m", "23Gi"},
      // 8×A100 with 94 cpu and 1990Gi: a GPU's share is above the defaults, which stand.
      {"two-pools", "8", "64", "256Gi"},
      {"two-pools", "2", "16", "64Gi"},
  }));
  CAPTURE(cluster, gpus);
  const auto view = view_of(cluster);
  const auto r =
      check(qos_pod("{limits: {nvidia.com/gpu: " + gpus + "}}"), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(resources_of(r)["requests"]["cpu"] == cpu);
  CHECK(resources_of(r)["limits"]["cpu"] == cpu);
  CHECK(resources_of(r)["requests"]["memory"] == memory);
  CHECK(resources_of(r)["limits"]["memory"] == memory);
  CHECK(r.violations.empty());
}

TEST_CASE("guaranteed-qos without a cluster view sets no cpu or memory and suggests them in a warning",
          "[guaranteed-qos]") {
  // Without a view gpuadmit cannot know what fits, and a size that fits no node strands the pod.
  const auto r = check(qos_pod("{limits: {nvidia.com/gpu: 1}}"), gpuadmit::test::policy_with(""), nullptr);
  CHECK(r.allowed);
  CHECK_FALSE(resources_of(r)["limits"].contains("cpu"));
  CHECK_FALSE(resources_of(r)["limits"].contains("memory"));
  CHECK(r.violations.empty());
  const std::string text = gpuadmit::test::messages(qos_pod("{limits: {nvidia.com/gpu: 1}}"),
                                                    gpuadmit::test::policy_with(""), nullptr);
  CHECK_THAT(text,
             Catch::Contains("cpu has neither request nor limit; with no cluster view gpuadmit cannot tell "
                             "what a node holds and sets no size (the policy suggests 8)"));
  CHECK_THAT(text, Catch::Contains("memory has neither request nor limit; with no cluster view") &&
                       Catch::Contains("(the policy suggests 32Gi)"));
}

TEST_CASE("guaranteed-qos does not raise a request to a limit no node it could use holds",
          "[guaranteed-qos]") {
  const auto view = view_of("gke-t4");
  const json object =
      qos_pod("{requests: {cpu: \"2\", memory: 8Gi}, limits: {cpu: \"16\", memory: 8Gi, nvidia.com/gpu: 1}}");
  const auto r = check(object, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(resources_of(r)["requests"]["cpu"] == "2");
  CHECK_THAT(
      gpuadmit::test::messages(object, gpuadmit::test::policy_with(""), &view),
      Catch::Contains("cpu request 2 is below its limit 16; raised to the limit it would fit no node that "
                      "can run this pod (the largest has 7910m cpu), so gpuadmit left it: lower the limit "
                      "to at most 7910m"));
}

TEST_CASE("guaranteed-qos still raises a request to a limit that a node holds", "[guaranteed-qos]") {
  const auto view = view_of("gke-t4");
  const auto r = check(
      qos_pod("{requests: {cpu: \"2\", memory: 8Gi}, limits: {cpu: \"4\", memory: 8Gi, nvidia.com/gpu: 1}}"),
      gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(resources_of(r)["requests"]["cpu"] == "4");
}

TEST_CASE("every mutated GPU fixture ends up Guaranteed with a cluster view to size from",
          "[rules][qos][guaranteed-qos]") {
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

TEST_CASE("guaranteed-qos strategies decide what a request below its limit becomes",
          "[rules][qos][guaranteed-qos]") {
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
    CHECK_THAT(
        warnings_text(r),
        Catch::Contains("guaranteed-qos: GPU pod left Burstable (container \"a\"): cpu request < limit, no "
                        "view to check a node holds the limit"));
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

TEST_CASE("containers with no cpu or memory get the policy's per-GPU defaults and a notice",
          "[rules][qos][guaranteed-qos]") {
  // The A100 nodes of the view hold more per GPU than the defaults (64 cpu, 512Gi for 4 GPUs).
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto r = gpuadmit::test::check(
      pod_with_spec("  containers: [{name: a, resources: {limits: {nvidia.com/gpu: 2}}}]"), RuleSet{}, &view);
  const json& resources = r.fixed["spec"]["containers"][0]["resources"];
  CHECK(resources["limits"]["cpu"] == "16");
  CHECK(resources["requests"]["memory"] == "64Gi");
  CHECK_THAT(warnings_text(r), Catch::Contains("gpuadmit set cpu 16, memory 64Gi (policy default per GPU)"));
}

TEST_CASE("a request above its limit is denied even by raise-requests", "[rules][qos][guaranteed-qos]") {
  const auto r = check(
      pod_with_spec("  containers: [{name: a, resources: {requests: {cpu: 8}, limits: {cpu: 4, memory: 1Gi, "
                    "nvidia.com/gpu: 1}}}]"));
  CHECK_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message, Catch::Contains("cpu request 8 exceeds its limit 4"));
}

namespace {

// A GPU container, a model downloader run before it and a sidecar, none of them sized.
json downloader_pod(const std::string& main_resources) {
  return pod_with_spec(R"(  initContainers:
    - name: fetch-model
      image: python:3.12
      command: [huggingface-cli, download, meta-llama/Llama-3.1-8B-Instruct]
    - name: log-shipper
      image: fluent/fluent-bit:3.1
      restartPolicy: Always
  containers:
    - name: server
      image: vllm/vllm-openai:v0.10.1
      resources: )" + main_resources);
}

}  // namespace

TEST_CASE("guaranteed-qos changes nothing when the pod would still not be Guaranteed", "[guaranteed-qos]") {
  // No GPU node in view (a pool at zero): the GPU container cannot be sized, so sizing the downloader and
  // the sidecar would only cap them (an OOMKill risk) and leave the pod Burstable.
  const auto view = view_of("cpu-only");
  const json pod = downloader_pod("{limits: {nvidia.com/gpu: 1}}");
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK_FALSE(r.fixed["spec"]["initContainers"][0].contains("resources"));
  CHECK_FALSE(r.fixed["spec"]["initContainers"][1].contains("resources"));
  CHECK(resources_of(r) == pod["spec"]["containers"][0]["resources"]);
  const std::string text = gpuadmit::test::messages(pod, gpuadmit::test::policy_with(""), &view);
  CHECK_THAT(text, Catch::Contains("would set memory request and limit to 512Mi, but the pod would still not "
                                   "be Guaranteed"));
  CHECK_THAT(warnings_text(r), Catch::Contains("guaranteed-qos: GPU pod left Burstable"));
}

TEST_CASE("guaranteed-qos on /validate does not deny what /mutate left because it could not finish",
          "[guaranteed-qos]") {
  const auto view = view_of("cpu-only");
  const auto decision = gpuadmit::test::run(downloader_pod("{limits: {nvidia.com/gpu: 1}}"),
                                            gpuadmit::policy::Mode::kValidate, RuleSet{}, &view);
  const auto denied_by = rules_of(decision.violations);
  CHECK(std::find(denied_by.begin(), denied_by.end(), "guaranteed-qos") == denied_by.end());
  const auto warned_by = rules_of(decision.warnings);
  CHECK(std::find(warned_by.begin(), warned_by.end(), "guaranteed-qos") != warned_by.end());
}

TEST_CASE("guaranteed-qos gives an init container that set nothing the app containers' total",
          "[guaranteed-qos]") {
  // It runs before them, so the pod's effective request does not grow; the downloader gets all the pod
  // holds, not the 512Mi meant for sidecars. No view is needed: nothing about the pod's fit changes.
  const json pod = downloader_pod("{limits: {cpu: \"4\", memory: 16Gi, nvidia.com/gpu: 1}}");
  const auto view = view_of("gke-t4");
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  const json& init = r.fixed["spec"]["initContainers"][0]["resources"];
  CHECK(init["requests"]["memory"] == "16Gi");
  CHECK(init["limits"]["cpu"] == "4");
  const json& sidecar = r.fixed["spec"]["initContainers"][1]["resources"];
  CHECK(sidecar["limits"]["memory"] == "512Mi");
  auto fixed = gpuadmit::k8s::parse_pod(r.fixed);
  REQUIRE(fixed.ok());
  CHECK(gpuadmit::k8s::compute_qos(*fixed) == gpuadmit::k8s::QosClass::kGuaranteed);
  CHECK_THAT(warnings_text(r),
             Catch::Contains("init container \"fetch-model\" set to the app containers' total "
                             "(cpu 4, memory 16Gi), as it runs first"));
}

TEST_CASE("guaranteed-qos leaves a Ray worker's cpu alone when its memory cannot be settled",
          "[guaranteed-qos]") {
  // A cpu request without a limit would be fixed, but the memory below its limit cannot be raised on a
  // node that does not hold it: one fix alone leaves the pod Burstable, so neither is made.
  const auto view = view_of("gke-t4");
  const json pod =
      qos_pod("{requests: {cpu: \"2\", memory: 8Gi}, limits: {memory: 64Gi, nvidia.com/gpu: 1}}");
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK_FALSE(resources_of(r)["limits"].contains("cpu"));
  CHECK(resources_of(r)["requests"]["memory"] == "8Gi");
  CHECK_THAT(gpuadmit::test::messages(pod, gpuadmit::test::policy_with(""), &view),
             Catch::Contains("would set the cpu limit to its request 2"));
}
