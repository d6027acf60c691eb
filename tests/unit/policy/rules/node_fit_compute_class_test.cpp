// node-fit and GKE's ComputeClasses (#46 item 6): a pod that selects a ComputeClass and that no running node
// of the class can take is not a certain Pending. GKE's autoscaler creates nodes for it from the class's
// priorities, each at least as large as the pending pod asks (or scales a pool of the class that is at
// zero), and the class is not in the view: the pod gets noNodeOffers' action and the class is named.
#include <catch2/catch.hpp>

#include <string>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::yaml;
using nlohmann::json;

// A GKE Standard cluster: one g2-standard-8 (1 L4) created for ComputeClass l4-class, with the taint GKE puts
// on a class's nodes, and one CPU node.
gpuadmit::policy::ClusterView gke_cluster() {
  const json list = yaml(R"(apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Node
    metadata:
      name: gke-l4-0
      labels: {cloud.google.com/compute-class: l4-class, cloud.google.com/gke-accelerator: nvidia-l4,
               node.kubernetes.io/instance-type: g2-standard-8}
    spec:
      taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule},
               {key: cloud.google.com/compute-class, value: l4-class, effect: NoSchedule}]
    status:
      allocatable: {cpu: "7", memory: 28Gi, pods: "110", nvidia.com/gpu: "1"}
      conditions: [{type: Ready, status: "True"}]
  - apiVersion: v1
    kind: Node
    metadata: {name: gke-cpu-0, labels: {node.kubernetes.io/instance-type: e2-standard-4}}
    status:
      allocatable: {cpu: "3", memory: 12Gi, pods: "110"}
      conditions: [{type: Ready, status: "True"}]
)");
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

// A pod of 2 L4s, which no running node has; `placement` is its selector or affinity.
json two_l4_pod(const std::string& placement) {
  return yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule},
                {key: cloud.google.com/compute-class, operator: Exists, effect: NoSchedule}]
)" + placement +
              R"(
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: 2}}
)");
}

const std::string kClassSelector = "  nodeSelector: {cloud.google.com/compute-class: l4-class}";
const std::string kClassAffinity =
    R"(  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:
      [{matchExpressions: [{key: cloud.google.com/compute-class, operator: In, values: [l4-class]}]}]}}})";

}  // namespace

TEST_CASE("node-fit leaves a pod that selects a GKE ComputeClass to the nodes the class may create",
          "[node-fit][pools]") {
  auto [name, placement, allowed] = GENERATE_COPY(table<std::string, std::string, bool>({
      {"a pod that selects the class by nodeSelector is warned", kClassSelector, true},
      {"a pod that selects the class by required node affinity is warned", kClassAffinity, true},
      {"a pod that selects only the accelerator, not a class, is denied as before",
       "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}", false},
  }));
  CAPTURE(name);
  const auto view = gke_cluster();
  const auto r = check(two_l4_pod(placement), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed == allowed);
  const std::string text = gpuadmit::test::all_text(r);
  if (allowed) {
    CHECK_THAT(text,
               Catch::Contains("no node can run this pod now; GKE's ComputeClass l4-class may create one"));
  } else {
    REQUIRE(r.violations.size() == 1);
    CHECK_THAT(r.violations[0].message,
               Catch::StartsWith("no node can run this pod: ") && !Catch::Contains("ComputeClass"));
  }
}

TEST_CASE(
    "node-fit's ComputeClass warning is a denial under a policy whose noNodeOffers enforces, with the fix",
    "[node-fit][pools]") {
  const auto view = gke_cluster();
  const auto r =
      check(two_l4_pod(kClassSelector),
            gpuadmit::test::policy_with("    node-fit: {action: enforce, noNodeOffers: enforce}\n"), &view);
  REQUIRE_FALSE(r.allowed);
  REQUIRE(r.violations.size() == 1);
  CHECK_THAT(
      r.violations[0].message,
      Catch::Contains("no node can run this pod right now: 1 node lacks nvidia.com/gpu; 1 node has 7 cpu "
                      "and 28Gi memory and 1 nvidia.com/gpu, the pod asks for 8 cpu and 32Gi memory and 2 "
                      "nvidia.com/gpu.") &&
          Catch::Contains("The pod selects GKE's ComputeClass l4-class") &&
          Catch::Contains("has cpu 8, memory 32Gi, nvidia.com/gpu 2") &&
          Catch::Contains("Fix: check that ComputeClass l4-class offers such machines "
                          "(kubectl get computeclass l4-class -o yaml)"));
}
