// ClusterSnapshot: the cluster as the cluster-aware rules see it. Immutable once built; the watcher builds a
// new one on every change and swaps a shared_ptr<const ClusterSnapshot>, so a request keeps the snapshot it
// started with. The objects themselves are shared with the watcher's cache and the snapshots before and
// after (SharedList), so a rebuild copies pointers and recomputes the indexes. Pure data plus indexes: the
// policy core never fetches anything.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/policy/shared_list.hpp"

namespace gpuadmit::policy {

struct ClusterSnapshot {
  SharedList<k8s::Node> nodes;  // sorted by name
  SharedList<k8s::ResourceQuota> quotas;
  SharedList<k8s::StorageClass> storage_classes;
  SharedList<k8s::PersistentVolumeClaim> claims;

  // Indexes, built by make_snapshot(); rules use them instead of scanning every node.
  // resource name → positions in `nodes` of the nodes with a positive allocatable amount of it.
  std::map<std::string, std::vector<std::size_t>, std::less<>> nodes_by_resource;
  // resource name → the largest allocatable amount of it on any schedulable node.
  std::map<std::string, k8s::Quantity, std::less<>> max_allocatable;
  // Nodes node-fit cannot tell apart: the same taints, allocatable, cordon, readiness and labels, the
  // per-node kubernetes.io/hostname aside. A pool of 1,000 identical nodes is one group, so node-fit checks
  // one node per group instead of every node (5,000 nodes are a handful of groups). `first` is a position
  // in `nodes`, the group's representative.
  struct NodeGroup {
    std::size_t first = 0;
    std::size_t count = 0;
  };
  // resource name → the groups that nodes_by_resource[name] falls into, in the order of their first node.
  std::map<std::string, std::vector<NodeGroup>, std::less<>> groups_by_resource;
  // Every node's group: what the cluster has (label values, say) without visiting each node.
  std::vector<NodeGroup> node_groups;

  [[nodiscard]] const k8s::StorageClass* storage_class(std::string_view name) const;
  [[nodiscard]] const k8s::StorageClass* default_storage_class() const;
  [[nodiscard]] const k8s::PersistentVolumeClaim* claim(std::string_view ns, std::string_view name) const;
};

ClusterSnapshot make_snapshot(SharedList<k8s::Node> nodes, SharedList<k8s::ResourceQuota> quotas,
                              SharedList<k8s::StorageClass> storage_classes,
                              SharedList<k8s::PersistentVolumeClaim> claims);
ClusterSnapshot make_snapshot(std::vector<k8s::Node> nodes, std::vector<k8s::ResourceQuota> quotas,
                              std::vector<k8s::StorageClass> storage_classes,
                              std::vector<k8s::PersistentVolumeClaim> claims);

// Whether node-fit can tell two nodes apart: everything it reads but the name and the
// kubernetes.io/hostname label. Equal nodes share a NodeGroup; group_hash is equal for them.
[[nodiscard]] bool same_group(const k8s::Node& a, const k8s::Node& b);
[[nodiscard]] std::size_t group_hash(const k8s::Node& node);

// The output of `kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims -A -o json|yaml`
// (a List), or a single object of one of those kinds. Other kinds are ignored; a malformed object is an
// error naming its kind, name and field.
Result<ClusterSnapshot> snapshot_from_list(const nlohmann::json& list);

// How fresh the snapshot is, as the caller (who has a clock) judged it.
struct ClusterView {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  bool stale = false;            // the watch lost the API server; the snapshot is the last good one
  std::int64_t age_seconds = 0;  // since the last successful sync, for messages
};

}  // namespace gpuadmit::policy
