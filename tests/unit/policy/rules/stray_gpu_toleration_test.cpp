// stray-gpu-toleration: a pod that asks for no GPU but tolerates the GPU taint can squat on GPU nodes,
// unless it is a DaemonSet's: the GPU stack (device plugin, DCGM exporter, feature discovery) must run on
// every GPU node without holding a GPU.
#include <catch2/catch.hpp>

#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using nlohmann::json;

json tolerating_pod(const std::string& owner) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml-team
)" + owner + R"(
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: main, image: busybox}]
)");
}

}  // namespace

TEST_CASE("stray-gpu-toleration judges by who owns the pod", "[stray-gpu-toleration]") {
  auto [owner, stray] = GENERATE(table<std::string, bool>({
      {"  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: gfd, uid: a1, controller: true}]",
       false},
      {"  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: a2, controller: true}]",
       true},
      {"", true},
  }));
  CAPTURE(owner);
  const auto r = check(tolerating_pod(owner),
                       gpuadmit::test::policy_with("    stray-gpu-toleration: {action: enforce}\n"), nullptr);
  CHECK(r.allowed == !stray);
}

TEST_CASE("stray-gpu-toleration leaves a pod whose DRA claims the view cannot tell",
          "[stray-gpu-toleration]") {
  // NVIDIA's DRA demos (demo/specs/quickstart/v1/gpu-test1.yaml) tolerate the GPU taint for the GPUs their
  // claims bring. Without the DRA kinds in view, or with a template the view has not seen yet, the pod may
  // hold GPUs: not a stray toleration.
  auto [view, source] = GENERATE(table<std::string, std::string>({
      {"", "resourceClaimTemplateName: single-gpu"},
      {"gpu-cluster", "resourceClaimTemplateName: single-gpu"},
      {"dra-cluster", "resourceClaimTemplateName: not-created-yet"},
  }));
  CAPTURE(view, source);
  const json pod = gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: ctr, image: ubuntu:22.04, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, )" + source +
                                        "}]\n");
  const auto rules = gpuadmit::test::policy_with("    stray-gpu-toleration: {action: enforce}\n");
  const auto cluster = view.empty() ? gpuadmit::policy::ClusterView{} : gpuadmit::test::view_of(view);
  const auto r = check(pod, rules, view.empty() ? nullptr : &cluster);
  CHECK(gpuadmit::test::all_text(r).find("stray-gpu-toleration") == std::string::npos);
}
