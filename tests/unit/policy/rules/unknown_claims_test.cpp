// A pod whose DRA claims the view cannot tell (policy/dra_devices.hpp's has_unknown_claims) may hold GPUs
// through them: no rule may take it for a pod without a GPU.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "support/policy_checks.hpp"

namespace {

// {fixture view ("" for none), the pod's claim source}: no view, a view without the DRA kinds, and a DRA view
// without the claim or template (created a moment earlier in the same apply, or later by a controller).
std::vector<std::pair<std::string, std::string>> unknown_claim_views() {
  return {{"", "resourceClaimName: gpu-claim"},
          {"gpu-cluster", "resourceClaimTemplateName: single-gpu"},
          {"dra-cluster", "resourceClaimName: not-created-yet"},
          {"dra-cluster", "resourceClaimTemplateName: not-created-yet"}};
}

}  // namespace

TEST_CASE("no rule takes a pod whose DRA claims the view cannot tell for a pod without a GPU",
          "[gpu-intent][stray-gpu-toleration]") {
  // run-ai/fake-gpu-operator's DRA demo: a CUDA pod whose claim is on gpu.nvidia.com; a GPU added beside it
  // would be a second one. NVIDIA's DRA demos (demo/specs/quickstart/v1/gpu-test1.yaml) tolerate the GPU
  // taint for the GPUs their claims bring: not a stray toleration.
  auto [rule, image, tolerations] = GENERATE(table<std::string, std::string, std::string>({
      {"gpu-intent", "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", ""},
      {"stray-gpu-toleration", "ubuntu:22.04",
       "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"},
  }));
  auto [view_name, source] = GENERATE(from_range(unknown_claim_views()));
  CAPTURE(rule, view_name, source);
  const nlohmann::json pod = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml-team}\nspec:\n" + tolerations +
      "  containers: [{name: ctr, image: " + image +
      ", resources: {claims: [{name: gpu}]}}]\n  resourceClaims: [{name: gpu, " + source + "}]\n");
  const auto rules = gpuadmit::test::policy_with("    " + rule + ": {action: enforce}\n");
  const auto view = view_name.empty() ? gpuadmit::policy::ClusterView{} : gpuadmit::test::view_of(view_name);
  const auto r = gpuadmit::test::check(pod, rules, view_name.empty() ? nullptr : &view);
  CHECK(r.patch.dump().find("nvidia.com/gpu") == std::string::npos);
  CHECK(gpuadmit::test::all_text(r).find(rule) == std::string::npos);
}
