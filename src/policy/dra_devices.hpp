// DRA as the rules see it: a pod's claims resolved against the snapshot, which device classes are GPUs, and
// which devices of a node a request can have. Private to the policy layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "gpuadmit/k8s/dra_objects.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/device_cel.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// One entry of the pod's spec.resourceClaims, with the claim spec it stands for.
struct PodClaim {
  std::size_t index = 0;  // in spec.resourceClaims
  const k8s::PodResourceClaim* ref = nullptr;
  const k8s::DeviceClaim* spec = nullptr;     // nullptr: missing, or no cluster to look in
  const k8s::ResourceClaim* claim = nullptr;  // resourceClaimName's claim, when it exists
};
std::vector<PodClaim> resolve_claims(const k8s::Pod& pod, const ClusterSnapshot* cluster);

// Whether the pod has a DRA claim whose devices the view cannot tell: no view of the DRA kinds, a claim or
// template not in it yet (created a moment earlier in the same apply, or by a controller after the pod), or
// a class it lacks. Such a pod may well hold GPUs: NVIDIA's DRA demos tolerate the GPU taint for theirs.
bool has_unknown_claims(const k8s::Pod& pod, const ClusterSnapshot* cluster);

// A device class whose devices are GPUs: its name matches the policy's gpuDeviceClasses patterns, or its
// extendedResourceName is one of the policy's GPU resources.
bool is_gpu_device_class(std::string_view name, const ClusterSnapshot* cluster, const RuleSet& rules);

// The GPUs a container gets from DRA: the devices of GPU classes that the claims it names ask for (every
// request of the claim, or the one it names). `All` counts as the most matching devices on one node (1
// without a cluster); firstAvailable counts its first choice.
// Selectors are evaluated within `budget` (none: each within its own).
std::int64_t dra_gpu_units(const k8s::Container& c, const k8s::Pod& pod, const ClusterSnapshot* cluster,
                           const RuleSet& rules, ReviewBudget* budget);

// The nodes with devices that GPU requests of the pod's claims could have (any of their ways' class and
// selectors; not evaluated counts as could), by device group (each node alone when the pod names nodes or
// a selector reads a device's own attributes): the group → how many such devices each of its nodes has.
std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>> nodes_with_gpu_devices(
    const k8s::Pod& pod, const ClusterSnapshot& cluster, const RuleSet& rules, ReviewBudget* budget);

// Whether devices match one way of serving a request: its class's selectors and its own, ANDed. Results
// are kept per shared device view, so a pool of identical GPUs is evaluated once; a selector that names
// an attribute a device keeps to itself (uuid) is evaluated on each device.
class DeviceMatcher {
 public:
  enum class Match : std::uint8_t { kYes, kNo, kError, kUnknown };
  // Selectors are evaluated within `budget`, a review's (none: each within its own): once it is spent,
  // every device is kUnknown.
  DeviceMatcher(const k8s::DeviceClass& cls, const k8s::DeviceSubRequest& request, ReviewBudget* budget);
  // Also for a class alone (KEP-5004's extended resources).
  DeviceMatcher(const k8s::DeviceClass& cls, ReviewBudget* budget);

  Match match(const k8s::Device& device);
  // Whether a selector may read one of these attribute short names (conservatively: spells it anywhere).
  [[nodiscard]] bool may_read(const std::set<std::string, std::less<>>& names) const;
  // The first runtime error a selector gave ("no such key: gpuModel"), and its expression.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] const std::string& error_expression() const noexcept { return error_expression_; }
  // Why a selector was not evaluated, when one was not.
  [[nodiscard]] const std::string& not_evaluated() const noexcept { return not_evaluated_; }

 private:
  using Kind = SelectorOutcome::Kind;
  // Selector i's outcome on `view`, its messages kept the first time.
  Kind outcome(std::size_t i, const k8s::DeviceView& view);
  Match evaluate_all(const k8s::DeviceView& view);
  // The selectors' outcomes ANDed in order, `kind_of(i)` giving selector i's: the scheduler stops at the
  // first that does not match.
  template <class KindOf>
  Match fold(KindOf kind_of) {
    Match result = Match::kYes;
    for (std::size_t i = 0; i < selectors_.size(); ++i) {
      const Kind kind = kind_of(i);
      if (kind == Kind::kFalse) return Match::kNo;
      if (kind == Kind::kError) return Match::kError;
      if (kind == Kind::kNotEvaluated) result = Match::kUnknown;
    }
    return result;
  }
  [[nodiscard]] bool reads_own(std::size_t i, const k8s::Device& device) const;
  // Whether selector i is pinned to a string this device's attribute is not (AttributePin): false without
  // evaluating it. A claim that picks one GPU by uuid looks at 40,000 devices at 5,000 nodes.
  [[nodiscard]] bool pinned_elsewhere(std::size_t i, const k8s::Device& device) const;
  void index_words();
  std::vector<CompiledSelector> selectors_;
  std::vector<std::optional<AttributePin>> pins_;  // per selector
  ReviewBudget* budget_ = nullptr;
  // Per selector, the identifiers it spells (attribute names among them), and whether it has an escape
  // that could spell one: what decides, once, whether a device's own attributes must be shown to it.
  struct Words {
    std::unordered_set<std::string> words;
    bool escaped = false;
  };
  std::vector<Words> words_;
  std::unordered_map<const k8s::DeviceView*, Match> by_view_;
  // (view, selector) → outcome, for the selectors that do not read a device's own attributes, when another
  // one does.
  std::map<std::pair<const k8s::DeviceView*, std::size_t>, Kind> by_selector_;
  std::string error_;
  std::string error_expression_;
  std::string not_evaluated_;
};

// The nodes the DRA checks visit: each device group as its first node standing for `count` nodes, or, with
// `each_node`, every node of them alone (for a pod that names nodes, or a selector that reads what a
// device keeps to itself, which tell a group's nodes apart).
std::vector<ClusterSnapshot::NodeGroup> device_units(const ClusterSnapshot& cluster, bool each_node);

// Whether the DRA checks must visit each node alone for this pod (see device_units).
bool tells_group_apart(const k8s::Pod& pod, const ClusterSnapshot& cluster,
                       const std::vector<const DeviceMatcher*>& matchers);

// Whether the request tolerates the device's taints (NoSchedule and NoExecute keep a device from new claims).
bool tolerates_device(const k8s::DeviceSubRequest& request, const k8s::Device& device);

// An attribute's value as people read it: "NVIDIA A100-SXM4-80GB", "8.0.0", "true", "3".
std::string attribute_text(const k8s::AttributeValue& value);

}  // namespace gpuadmit::policy
