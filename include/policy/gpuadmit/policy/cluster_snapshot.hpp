// ClusterSnapshot: the cluster as the cluster-aware rules see it. Immutable once built; the watcher builds a
// new one on every change and swaps a shared_ptr<const ClusterSnapshot>, so a request keeps the snapshot it
// started with. The objects themselves are shared with the watcher's cache and the snapshots before and
// after (SharedList), so a rebuild copies pointers and recomputes the indexes. Pure data plus indexes: the
// policy core never fetches anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/dra_objects.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/policy/shared_list.hpp"

namespace gpuadmit::policy {

// The kinds of objects in the view (the cluster layer watches them as cluster::Kind), so that staleness can
// be told per kind: the rules read different kinds, and a tenant creates some of them.
enum class ViewKind : std::uint8_t {
  kNode,
  kResourceQuota,
  kStorageClass,
  kPersistentVolumeClaim,
  kDeviceClass,
  kResourceSlice,
  kResourceClaim,
  kResourceClaimTemplate,
  kNodePool,
};
using ViewKinds = std::uint16_t;  // a set of ViewKind, one bit each
[[nodiscard]] constexpr ViewKinds view_kind_bit(ViewKind kind) noexcept {
  return static_cast<ViewKinds>(1U << static_cast<unsigned>(kind));
}
inline constexpr ViewKinds kEveryViewKind = 0x1FF;
// What the DRA rules read of a pod's claims: the devices, and the claims and templates that ask for them.
inline constexpr ViewKinds kDeviceViewKinds =
    view_kind_bit(ViewKind::kDeviceClass) | view_kind_bit(ViewKind::kResourceSlice) |
    view_kind_bit(ViewKind::kResourceClaim) | view_kind_bit(ViewKind::kResourceClaimTemplate);

struct ClusterSnapshot {
  SharedList<k8s::Node> nodes;  // sorted by name
  SharedList<k8s::ResourceQuota> quotas;
  SharedList<k8s::StorageClass> storage_classes;
  SharedList<k8s::PersistentVolumeClaim> claims;
  // Dynamic Resource Allocation (resource.k8s.io/v1).
  SharedList<k8s::DeviceClass> device_classes;  // sorted by name
  SharedList<k8s::ResourceSlice> resource_slices;
  SharedList<k8s::ResourceClaim> resource_claims;
  SharedList<k8s::ResourceClaimTemplate> claim_templates;
  // Karpenter's NodePools (karpenter.sh/v1): pools that launch nodes on demand, perhaps from zero.
  SharedList<k8s::NodePool> node_pools;  // sorted by name
  // Whether the DRA kinds above are known: watched and listed (a cluster serving resource.k8s.io/v1), or in
  // the --cluster file. Without them nothing is said about claims: a missing one may only be unseen.
  bool dra_listed = false;

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

  // The current slices (of each pool, the newest generation only, as the scheduler reads them): node name →
  // the slices of devices local to that node; and the slices of devices several nodes reach (allNodes, a
  // node selector). Pointers into resource_slices.
  std::map<std::string, std::vector<const k8s::ResourceSlice*>, std::less<>> slices_by_node;
  std::vector<const k8s::ResourceSlice*> shared_slices;
  // Nodes the DRA checks cannot tell apart: of one node group, reaching devices of the same shape (equal
  // views and taints, in the same order, with own attributes of the same names whose values are equal in
  // the same places). Only nodes that reach a device; positions in `nodes`, the first the representative.
  // 5,000 nodes of 8 identical GPUs are one group, so dra-claims tries one node instead of 5,000. A selector
  // that reads an own attribute (uuid) tells them apart again: see own_attribute_names.
  std::vector<std::vector<std::size_t>> device_groups;
  // The short names ("uuid") of the attributes some device keeps to itself (k8s::Device::own_attributes).
  std::set<std::string, std::less<>> own_attribute_names;
  // KEP-5004: extended resource → the DeviceClass whose extendedResourceName it is. The nodes whose devices
  // of that class serve it carry the count in their allocatable here (not in the API), so node-fit and
  // gpu-quota read DRA-served GPUs as they read the device plugin's.
  std::map<std::string, std::string, std::less<>> dra_extended_resources;
  // "namespace/name" → the ResourceClaim or ResourceClaimTemplate: pods name them, and a cluster holds one
  // claim per GPU pod.
  std::map<std::string, const k8s::ResourceClaim*, std::less<>> claims_by_key;
  std::map<std::string, const k8s::ResourceClaimTemplate*, std::less<>> templates_by_key;

  [[nodiscard]] const k8s::StorageClass* storage_class(std::string_view name) const;
  [[nodiscard]] const k8s::DeviceClass* device_class(std::string_view name) const;
  [[nodiscard]] const k8s::ResourceClaim* resource_claim(std::string_view ns, std::string_view name) const;
  [[nodiscard]] const k8s::ResourceClaimTemplate* claim_template(std::string_view ns,
                                                                 std::string_view name) const;
  // The devices a node can reach: its own slices', then the shared slices' whose selector matches it.
  [[nodiscard]] std::vector<const k8s::ResourceSlice*> slices_for(const k8s::Node& node) const;
  [[nodiscard]] const k8s::StorageClass* default_storage_class() const;
  [[nodiscard]] const k8s::PersistentVolumeClaim* claim(std::string_view ns, std::string_view name) const;
};

// Everything a snapshot is built from, each kind as the watcher's cache or a file holds it.
struct ClusterObjects {
  SharedList<k8s::Node> nodes;
  SharedList<k8s::ResourceQuota> quotas;
  SharedList<k8s::StorageClass> storage_classes;
  SharedList<k8s::PersistentVolumeClaim> claims;
  SharedList<k8s::DeviceClass> device_classes;
  SharedList<k8s::ResourceSlice> resource_slices;
  SharedList<k8s::ResourceClaim> resource_claims;
  SharedList<k8s::ResourceClaimTemplate> claim_templates;
  SharedList<k8s::NodePool> node_pools;
  bool dra_listed = false;
};

ClusterSnapshot make_snapshot(ClusterObjects objects);
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

// The output of `kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims,deviceclasses,
// resourceslices,resourceclaims,resourceclaimtemplates,nodepools.karpenter.sh -A -o json|yaml` (a List), or a
// single object of one of those kinds. Other kinds are ignored; a malformed object is an error naming its
// kind, name and field.
Result<ClusterSnapshot> snapshot_from_list(const nlohmann::json& list);

// How fresh the snapshot is, as the caller (who has a clock) judged it.
struct ClusterView {
  std::shared_ptr<const ClusterSnapshot> snapshot;
  bool stale = false;            // the watch lost the API server; the snapshot is the last good one
  std::int64_t age_seconds = 0;  // since the last successful sync, for messages
  // Which kinds are stale when `stale`: every kind unless the caller tells them apart (the watcher does).
  ViewKinds stale_kinds = kEveryViewKind;

  // Whether a verdict drawn from `reads` rests on stale facts.
  [[nodiscard]] bool stale_for(ViewKinds reads) const noexcept { return stale && (stale_kinds & reads) != 0; }
};

}  // namespace gpuadmit::policy
