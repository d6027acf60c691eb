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
