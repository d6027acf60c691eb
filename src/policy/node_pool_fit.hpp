// Whether an autoscaler could launch a node for a pod that no node of the cluster can run now. Karpenter
// states its pools in the API (NodePool); a pool at zero nodes has no Node to read, so node-fit asks here
// before it calls a pod Pending for certain.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::policy {

// The first NodePool (by name) that could launch a node for `pod`, which asks `wanted` of one node and
// `gpus` GPUs of it (a DRA pod's claims: 1; 0 for none), as Karpenter decides it: the pod tolerates the
// pool's scheduling taints; its node selector and required node affinity agree with the pool's template
// labels and requirements (a well-known label the pool leaves open, such as the instance type, may take any
// value its instance types have; another label the pool does not define cannot be matched); the pool's limits
// leave room for the pod; and the pool does not rule GPUs out (instance-category without g or p, a GPU count
// below the pod's). What instance types the cloud offers is not in the API: a pool that allows the pod is
// one that may launch a node for it, not one that certainly will.
struct PoolFit {
  const k8s::NodePool* pool = nullptr;  // nullptr when none may
  // When none may: each pool's name and why not ("its taint gpu-type=a100:NoSchedule is not tolerated").
  std::vector<std::pair<std::string, std::string>> why_not;
};
[[nodiscard]] PoolFit pool_that_could_launch(const ClusterSnapshot& cluster, const k8s::Pod& pod,
                                             const k8s::ResourceList& wanted, std::int64_t gpus);

// The GKE ComputeClass the pod selects (nodeSelector or a required node affinity `In` on
// cloud.google.com/compute-class), or "". GKE's autoscaler creates a node for such a pod from the class's
// priorities, each node at least as large as the pending pod's requests
// (cloud.google.com/kubernetes-engine/docs/concepts/node-auto-provisioning), and a class may name node pools
// at zero: the class is not in the view, so the nodes of the class that run now do not bound what it may add.
[[nodiscard]] std::string compute_class_of(const k8s::Pod& pod);

}  // namespace gpuadmit::policy
