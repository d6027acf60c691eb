// gpu-tolerations: tolerate the taints of the nodes the pod can use, once gpuadmit or the pod itself has
// narrowed them to a pool; with no GPU node in view, the policy's list.
#include <catch2/catch.hpp>

#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::view_of;
using nlohmann::json;

json pod(const std::string& gpus, const std::string& metadata_extra = "",
         const std::string& spec_extra = "") {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml-team
)" + metadata_extra + R"(
spec:
)" + spec_extra + R"(
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: )" +
                              gpus + "}}\n");
}

const json kGpuTaint = {
    {"key", "nvidia.com/gpu"}, {"operator", "Equal"}, {"value", "present"}, {"effect", "NoSchedule"}};
const json kA100Taint = {
    {"key", "gpu-type"}, {"operator", "Equal"}, {"value", "a100"}, {"effect", "NoSchedule"}};

}  // namespace

TEST_CASE("gpu-tolerations tolerates the taints of the pool the pod is narrowed to", "[gpu-tolerations]") {
  auto [about, object, expected] = GENERATE_COPY(table<std::string, json, json>({
      // gpu-type steers the pod to the A100 pool; without that pool's own taint node-fit denied the pod
      // for the taint of the pool gpuadmit sent it to.
      {"steered by gpu-type", pod("1", "  annotations: {gpuadmit.io/gpu-type: a100}"),
       json{kA100Taint, kGpuTaint}},
      {"the pod's own nodeSelector",
       pod("1", "", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}"),
       json{kA100Taint, kGpuTaint}},
      // Only the A100 nodes hold 8 GPUs.
      {"more GPUs than the T4 pool has", pod("8"), json{kA100Taint, kGpuTaint}},
      // Not narrowed: the A100 pool's taint reserves it, and stays untolerated.
      {"not narrowed", pod("1"), json{kGpuTaint}},
  }));
  CAPTURE(about);
  const auto view = view_of("two-pools");
  const auto r = check(object, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}

TEST_CASE("with no node offering the GPU (a pool scaled to zero), the policy's tolerations are added",
          "[gpu-tolerations]") {
  // An autoscaler never scales up a tainted pool for a pod that does not tolerate its taint.
  const auto view = view_of("cpu-only");
  const auto r = check(pod("1"), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  const json expected =
      json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])");
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}
