// guaranteed-qos: the sizes it writes must leave the pod fitting a node it could use (no harm), and without
// a cluster view it invents no sizes at all.
#include <catch2/catch.hpp>

#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::view_of;
using nlohmann::json;

json pod(const std::string& resources, const std::string& extra = "") {
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
      check(pod("{limits: {nvidia.com/gpu: " + gpus + "}}"), gpuadmit::test::policy_with(""), &view);
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
  const auto r = check(pod("{limits: {nvidia.com/gpu: 1}}"), gpuadmit::test::policy_with(""), nullptr);
  CHECK(r.allowed);
  CHECK_FALSE(resources_of(r)["limits"].contains("cpu"));
  CHECK_FALSE(resources_of(r)["limits"].contains("memory"));
  CHECK(r.violations.empty());
  const std::string text = gpuadmit::test::messages(pod("{limits: {nvidia.com/gpu: 1}}"),
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
      pod("{requests: {cpu: \"2\", memory: 8Gi}, limits: {cpu: \"16\", memory: 8Gi, nvidia.com/gpu: 1}}");
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
      pod("{requests: {cpu: \"2\", memory: 8Gi}, limits: {cpu: \"4\", memory: 8Gi, nvidia.com/gpu: 1}}"),
      gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(resources_of(r)["requests"]["cpu"] == "4");
}
