// RuleContext: what a rule sees and how it reports. Private to the policy layer.
// A rule reads the typed pod view, reports findings with the action the policy gave it, and, when the
// mode allows, edits parts of the object (object_edits.hpp); the evaluator re-reads the parts a rule changed
// into the view before the next rule runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/policy/parameters.hpp"
#include "gpuadmit/policy/review_budget.hpp"
#include "gpuadmit/policy/rule_set.hpp"
#include "gpuadmit/policy/text.hpp"
#include "object_edits.hpp"

namespace gpuadmit::policy {

class RuleContext {
 public:
  RuleContext(ObjectEdits& edits, k8s::Pod pod, const RuleSet& rules, Mode mode, Decision& decision,
              const ClusterView* cluster)
      : edits_(edits),
        pod_(std::move(pod)),
        rules_(rules),
        mode_(mode),
        decision_(decision),
        cluster_(cluster) {}

  [[nodiscard]] const k8s::Pod& pod() const noexcept { return pod_; }
  [[nodiscard]] const RuleSet& rules() const noexcept { return rules_; }
  [[nodiscard]] bool can_fix() const noexcept { return mode_ == Mode::kMutate; }
  // Fixes outside the containers' own resources (tolerations, volumes, affinity, presets, an added GPU):
  // not on a partial pod, whose runtime merges in pod-level fields gpuadmit cannot see and would replace.
  [[nodiscard]] bool can_fix_pod() const noexcept { return can_fix() && !partial_; }
  // A pod a serving runtime completes (KServe's predictor): only what no runtime can mend is denied
  // (a fractional GPU, a GPU limit unlike its request, GPUs beyond the quota); the rest warns.
  [[nodiscard]] bool partial() const noexcept { return partial_; }
  void set_partial(bool partial) noexcept { partial_ = partial; }
  // Whether the pod's own labels and annotations can be written (evaluate.hpp Request::metadata_elsewhere).
  [[nodiscard]] bool can_fix_metadata() const noexcept { return !metadata_elsewhere_; }
  void set_metadata_elsewhere(bool elsewhere) noexcept { metadata_elsewhere_ = elsewhere; }
  // The cluster as last seen, or nullptr when gpuadmit runs without one (offline check without --cluster).
  [[nodiscard]] const ClusterSnapshot* cluster() const noexcept {
    return cluster_ != nullptr ? cluster_->snapshot.get() : nullptr;
  }
  [[nodiscard]] const ClusterView* cluster_view() const noexcept { return cluster_; }

  // Runs `rule` on the pod: what it reports and fixes is recorded under its id.
  void run(const RuleEntry& rule) {
    rule_ = &rule;
    rule.run(*this);
  }

  // Records a finding of the running rule under `action` (enforce → violation, warn → warning, audit).
  void report(Action action, std::string field, std::string message, std::string summary);
  // Records an applied fix of the running rule; call after editing a part.
  void fixed(std::string field, std::string description);

  void notice(std::string text);

  // A part of the object to edit (mutate mode only); call fixed() for what the edit did.
  nlohmann::json& edit(const k8s::PodPart& part) { return edits_.edit(part); }
  // A new item at the end of a list part (volumeMounts, tolerations, volumes), to fill in at once.
  nlohmann::json& append(const k8s::PodPart& part) { return edits_.append(part); }
  // A part as it stands now, for reading what the typed view does not hold (env values, volume specs):
  // with the edits of earlier rules, and of this one so far.
  [[nodiscard]] nlohmann::json current(const k8s::PodPart& part) const { return edits_.current(part); }

  // Whether the typed view is behind the edits.
  [[nodiscard]] bool dirty() const noexcept { return edits_.stale(); }
  Result<bool> refresh() {
    gpu_pod_.reset();  // the typed pod may change here, and only here
    container_gpus_.clear();
    dra_gpu_nodes_.reset();
    return edits_.refresh(pod_);
  }
  // Another pod template of the same workload asks for GPUs (evaluate.hpp Request::gpu_siblings).
  [[nodiscard]] bool gpu_siblings() const noexcept { return gpu_siblings_; }
  void set_gpu_siblings(bool siblings) noexcept { gpu_siblings_ = siblings; }
  // What the review may still spend on device selectors (review_budget.hpp); none: each its own budget.
  [[nodiscard]] ReviewBudget* budget() const noexcept { return budget_; }
  void set_budget(ReviewBudget* budget) noexcept { budget_ = budget; }
  // Pods of this shape that run at once (1 for a pod; a workload template's replicas or parallelism).
  [[nodiscard]] std::int64_t replicas() const noexcept { return replicas_; }
  void set_replicas(std::int64_t replicas) noexcept { replicas_ = replicas; }

  // GPU helpers shared by the rules. Every rule asks is_gpu_pod() first and most ask gpu_units(c) of each
  // container, so the answers are kept until the typed pod next changes (refresh).
  [[nodiscard]] bool is_gpu_pod() const;
  // Whether the pod needs what only GPU nodes offer: a GPU, or a GPU share that nodes advertise and the
  // scheduler and quotas count (Alibaba's aliyun.com/gpu-mem), which is no GPU for the other rules.
  [[nodiscard]] bool needs_gpu_node() const;
  [[nodiscard]] std::int64_t gpu_units(const k8s::Container& c) const;  // whole GPUs the container holds
  [[nodiscard]] std::int64_t gpu_units() const;                         // over app containers and sidecars
  // The nodes with devices the pod's DRA GPU requests could have, with how many (nodes_with_gpu_devices in
  // dra_devices.hpp), by device group: a scan of the devices, so it is kept until the typed pod next changes.
  [[nodiscard]] const std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>>& dra_gpu_nodes() const;

 private:
  [[nodiscard]] bool any_gpu_container() const;
  [[nodiscard]] std::int64_t count_gpu_units(const k8s::Container& c) const;

  ObjectEdits& edits_;
  k8s::Pod pod_;
  const RuleSet& rules_;
  Mode mode_;
  Decision& decision_;
  const ClusterView* cluster_;
  const RuleEntry* rule_ = nullptr;  // the one running
  ReviewBudget* budget_ = nullptr;
  std::int64_t replicas_ = 1;
  bool partial_ = false;
  bool metadata_elsewhere_ = false;
  bool gpu_siblings_ = false;
  mutable std::optional<bool> gpu_pod_;
  mutable std::vector<std::int64_t> container_gpus_;  // by position in pod_.containers; empty: not counted
  mutable std::optional<std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>>> dra_gpu_nodes_;
};

// "spec.containers[0]" / "spec.initContainers[1]", plus an optional suffix.
std::string field_of(const k8s::Container& c, std::string_view suffix = {});
// `container "train"`, `init container "setup"`, `sidecar "proxy"`.
std::string describe(const k8s::Container& c);
// The pod's annotation `key`, or nullptr.
const std::string* annotation(const k8s::Pod& pod, std::string_view key);
// ASCII lower case (product names, image references).
std::string lower(std::string_view s);
// The node groups that offer any of the GPU resources the pod's containers limit, each once and in node
// order (candidate_units: node by node when the pod names nodes).
std::vector<ClusterSnapshot::NodeGroup> gpu_groups_for(const RuleContext& ctx);
// A node label read as an integer (nvidia.com/gpu.memory, nvidia.com/cuda.driver.major), if it is one.
std::optional<std::int64_t> int_label(const k8s::Node& node, const std::string& key);
// The amount of `name` in the list, or nullptr when it names none.
const k8s::Quantity* quantity_of(const k8s::ResourceList& list, std::string_view name);
// A quantity for people: "0.5" for 500m, "16Gi" for binary values, "2" for whole numbers.
std::string human(const k8s::Quantity& q);
// "7e9", "7B", "1.3b", "350M", "70000000000" → parameter count (the gpuadmit.io/model-parameters annotation).
std::optional<double> parse_parameter_count(std::string_view text);
// shm-size's /dev/shm for containers whose memory limits total `memory`: the policy's share of it, rounded
// up to whole MiB (GiB from 1 GiB), within [minimum, maximum]. Memory-backed emptyDir pages count against
// the pod's memory limit, so the share must leave the rest for the process itself.
k8s::Quantity shm_share(const ShmSize& cfg, const k8s::Quantity& memory);

// checkpoint-pvc on a PersistentVolumeClaim (the only rule for that kind).
void check_checkpoint_claim(const nlohmann::json& object, const RuleSet& rules,
                            const ClusterSnapshot* cluster, Decision& decision);
Result<bool> checkpoint_claim_parse_check(const nlohmann::json& object);

// gpu-quota across a workload's templates whose pods run at once: a quota on GPUs that each template's pods
// fit alone but not together (a template over it alone was reported by the rule itself).
struct QuotaShare {
  k8s::Pod pod;
  std::int64_t replicas = 1;
  std::string tag;  // "replicatedJobs[workers]", "head"
};
void check_workload_gpu_quota(const std::vector<QuotaShare>& shares, const RuleSet& rules,
                              const ClusterView* view, std::string_view ns, Decision& decision);

// Effective pod requests as the scheduler sums them: max(largest init container + the sidecars started before
// it, app containers + sidecars), per resource, with requests defaulted from limits.
k8s::ResourceList effective_requests(const k8s::Pod& pod);

// Whether the pod's node selector or required affinity names single nodes (hostname label, metadata.name),
// which node groups do not keep apart.
bool names_nodes(const k8s::Pod& pod);
// The nodes offering `resource`, one representative per group of indistinguishable nodes
// (ClusterSnapshot::NodeGroup, weighted by its size), or node by node when the pod names nodes.
std::vector<ClusterSnapshot::NodeGroup> candidate_units(const ClusterSnapshot& cluster,
                                                        std::string_view resource, const k8s::Pod& pod);
// The pod's effective requests of GPU resources (positive amounts only).
k8s::ResourceList gpu_requests(const RuleContext& ctx);
// The node groups the pod's GPUs could run on: schedulable and Ready nodes that offer every GPU resource the
// pod asks for, in the amount it asks, and match its node selector and required node affinity. Taints are
// not applied (gpu-tolerations adds the GPU ones), nor cpu and memory (guaranteed-qos sizes them from these
// nodes; node-fit then checks them). Empty without a cluster view or when no node qualifies.
std::vector<ClusterSnapshot::NodeGroup> eligible_gpu_groups(const RuleContext& ctx);

// ANDs `alternatives` (ORed terms, each a list of match expressions) into the required node affinity of
// `affinity` (the spec's affinity member): every existing term becomes one term per alternative. Returns
// false when every existing term already holds one of the alternatives (nothing to do: idempotence).
bool require_node_affinity(nlohmann::json& affinity, const std::vector<nlohmann::json>& alternatives);

}  // namespace gpuadmit::policy
