// Typed, read-only views of the Kubernetes objects the policy reads: only the fields rules need.
// Parsed once from JSON (parse_pod / parse_node); the JSON itself stays the source of truth for mutation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuadmit/k8s/flat_map.hpp"
#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::k8s {

using ResourceList = FlatMap<Quantity>;  // few entries, read after every fix: see flat_map.hpp
using StringMap = FlatMap<std::string>;

// resources.claims[]: a pod resource claim (by its name in spec.resourceClaims) the container uses, or one
// request of it.
struct ContainerClaim {
  std::string name;
  std::string request;
  bool operator==(const ContainerClaim&) const = default;
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  std::vector<ContainerClaim> claims;
  bool operator==(const ResourceRequirements&) const = default;
};

// Init containers with restartPolicy: Always are sidecars: they run beside the app containers.
enum class ContainerKind : std::uint8_t { kInit, kSidecar, kRegular };

struct VolumeMount {
  std::string name;
  std::string mount_path;
  bool operator==(const VolumeMount&) const = default;
};

struct Container {
  std::string name;
  std::string image;
  ContainerKind kind = ContainerKind::kRegular;
  std::size_t index = 0;  // position in its own array (initContainers or containers)
  ResourceRequirements resources;
  std::vector<VolumeMount> volume_mounts;
  std::vector<std::string> command;
  std::vector<std::string> args;

  // "initContainers" or "containers": the JSON array this container lives in.
  [[nodiscard]] const char* array_name() const noexcept {
    return kind == ContainerKind::kRegular ? "containers" : "initContainers";
  }
  bool operator==(const Container&) const = default;
};

struct Toleration {
  std::string key;
  std::string op;  // "Exists" or "Equal" ("" means Equal)
  std::string value;
  std::string effect;  // "" matches every effect
  std::optional<std::int64_t> toleration_seconds;
  bool operator==(const Toleration&) const = default;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  bool operator==(const Taint&) const = default;
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct Volume {
  std::string name;
  bool empty_dir = false;
  std::string medium;  // emptyDir medium ("" or "Memory")
  std::optional<Quantity> size_limit;
  std::string claim_name;  // persistentVolumeClaim.claimName
  std::string host_path;   // hostPath.path
  // A generic ephemeral volume: its claim is made from ephemeral.volumeClaimTemplate, per pod.
  bool ephemeral = false;
  std::optional<std::string> ephemeral_storage_class;  // the template's spec.storageClassName
  bool operator==(const Volume&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  StringMap labels;
  StringMap annotations;
  std::string controller_kind;  // the kind of the ownerReference with controller: true ("DaemonSet"), if any
  bool operator==(const ObjectMeta&) const = default;
};

// spec.resourceClaims[]: a DRA claim the pod uses, by name, made from a template per pod, or neither (the
// API server rejects that; a pod template of a workload may leave it to a controller).
struct PodResourceClaim {
  std::string name;
  std::string claim_name;     // resourceClaimName: an existing ResourceClaim, shared by whoever names it
  std::string template_name;  // resourceClaimTemplateName: a ResourceClaim made for each pod
  bool operator==(const PodResourceClaim&) const = default;
};

struct Pod {
  ObjectMeta meta;
  std::vector<Container> containers;  // init and sidecar containers first, then app containers; no ephemeral
  StringMap node_selector;
  std::vector<NodeSelectorTerm> required_node_terms;  // affinity.nodeAffinity.requiredDuringScheduling...
  bool has_required_affinity = false;
  std::vector<Toleration> tolerations;
  std::vector<Volume> volumes;
  std::vector<PodResourceClaim> resource_claims;
  std::optional<ResourceRequirements> pod_resources;  // spec.resources (pod-level resources)
  std::string node_name;
  std::string priority_class_name;   // what quota scopeSelector PriorityClass matches
  bool has_active_deadline = false;  // spec.activeDeadlineSeconds: quota scope Terminating
  bool operator==(const Pod&) const = default;
};

struct Node {
  std::string name;
  StringMap labels;
  std::vector<Taint> taints;
  ResourceList allocatable;
  bool unschedulable = false;
  bool ready = true;
  bool operator==(const Node&) const = default;
};

// A Karpenter NodePool (karpenter.sh/v1): the nodes it would launch, as far as they decide whether it can
// launch one for a pod. An autoscaled pool at zero nodes has no Node to read, only this.
struct NodePool {
  std::string name;
  StringMap labels;                                   // spec.template.metadata.labels
  std::vector<NodeSelectorRequirement> requirements;  // spec.template.spec.requirements (minValues aside)
  std::vector<Taint> taints;  // spec.template.spec.taints; startupTaints go once the node is up
  ResourceList limits;        // spec.limits: what all of its nodes together may hold
  ResourceList used;          // status.resources: what its nodes hold now
  bool operator==(const NodePool&) const = default;
};

// One spec.scopeSelector.matchExpressions entry: scopeName, operator (In, NotIn, Exists, DoesNotExist).
struct ScopeRequirement {
  std::string scope_name;
  std::string op;
  std::vector<std::string> values;
  bool operator==(const ScopeRequirement&) const = default;
};

struct ResourceQuota {
  std::string namespace_;
  std::string name;
  // spec.scopes and spec.scopeSelector: the quota counts (and constrains) only the pods they match.
  std::vector<std::string> scopes;
  std::vector<ScopeRequirement> scope_selector;
  ResourceList hard;  // keys as in the API: "requests.nvidia.com/gpu", "limits.cpu", "cpu", "pods", …
  ResourceList used;
  bool operator==(const ResourceQuota&) const = default;
};

struct StorageClass {
  std::string name;
  std::string provisioner;
  bool is_default = false;  // annotation storageclass.kubernetes.io/is-default-class: "true"
  bool operator==(const StorageClass&) const = default;
};

struct PersistentVolumeClaim {
  ObjectMeta meta;
  std::optional<std::string> storage_class;  // unset means "the default class"
  std::optional<Quantity> request;           // spec.resources.requests.storage
  std::optional<Quantity> capacity;          // status.capacity.storage: what a bound volume holds
  std::string phase;
  bool operator==(const PersistentVolumeClaim&) const = default;
};

// A display name for diagnostics: name, or generateName followed by '*', or "<unnamed>".
std::string display_name(const ObjectMeta& meta);

}  // namespace gpuadmit::k8s
