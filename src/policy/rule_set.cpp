#include "gpuadmit/policy/rule_set.hpp"

#include <algorithm>

namespace gpuadmit::policy {

std::string_view to_string(Action action) noexcept {
  switch (action) {
    case Action::kOff:
      return "off";
    case Action::kAudit:
      return "audit";
    case Action::kWarn:
      return "warn";
    case Action::kEnforce:
      return "enforce";
  }
  return "off";
}

std::string_view to_string(QosStrategy strategy) noexcept {
  switch (strategy) {
    case QosStrategy::kRaiseRequests:
      return "raise-requests";
    case QosStrategy::kLowerLimits:
      return "lower-limits";
    case QosStrategy::kDeny:
      return "deny";
  }
  return "raise-requests";
}

std::string_view to_string(OnStale on_stale) noexcept {
  switch (on_stale) {
    case OnStale::kWarn:
      return "warn";
    case OnStale::kEnforce:
      return "enforce";
    case OnStale::kSkip:
      return "skip";
  }
  return "warn";
}

bool is_cluster_aware(std::string_view rule_id) noexcept {
  return rule_id == "gpu-type" || rule_id == "cuda-driver" || rule_id == "node-fit" || rule_id == "gpu-quota";
}

std::string cluster_aware_rule_list() {
  std::string out;
  for (const std::string_view id : kRuleIds) {
    if (is_cluster_aware(id)) out.append(out.empty() ? "" : ", ").append(id);
  }
  return out;
}

bool RuleSet::is_gpu_resource(std::string_view name) const noexcept {
  for (const std::string& pattern : gpu_resources) {
    if (pattern.empty()) {
      if (name.empty()) return true;
      continue;
    }
    // Rules ask this of every resource name (cpu, memory, ...): the first byte rejects most at once.
    if (pattern.front() != '*' && (name.empty() || name.front() != pattern.front())) continue;
    if (pattern.back() == '*') {
      if (name.substr(0, pattern.size() - 1) == std::string_view(pattern).substr(0, pattern.size() - 1)) {
        return true;
      }
    } else if (name == pattern) {
      return true;
    }
  }
  return false;
}

bool RuleSet::is_excluded(std::string_view ns) const noexcept {
  return std::find(excluded_namespaces.begin(), excluded_namespaces.end(), ns) != excluded_namespaces.end();
}

Action RuleSet::action_of(std::string_view rule_id) const noexcept {
  if (rule_id == "gpu-intent") return gpu_intent.action;
  if (rule_id == "gpu-whole-units") return gpu_whole_units.action;
  if (rule_id == "gpu-limit-equals-request") return gpu_limit_equals_request.action;
  if (rule_id == "guaranteed-qos") return guaranteed_qos.action;
  if (rule_id == "memory-floor") return memory_floor.action;
  if (rule_id == "gpu-tolerations") return gpu_tolerations.action;
  if (rule_id == "stray-gpu-toleration") return stray_gpu_toleration.action;
  if (rule_id == "gpu-type") return gpu_type.action;
  if (rule_id == "cuda-driver") return cuda_driver.action;
  if (rule_id == "node-fit") return node_fit.action;
  if (rule_id == "gpu-quota") return gpu_quota.action;
  if (rule_id == "checkpoint-pvc") return checkpoint_pvc.action;
  if (rule_id == "shm-size") return shm_size.action;
  if (rule_id == "presets") return presets.action;
  return Action::kOff;
}

const WorkloadKind* RuleSet::workload_of(std::string_view api_group, std::string_view kind) const noexcept {
  for (const WorkloadKind& w : workloads) {
    if (w.api_group == api_group && std::find(w.kinds.begin(), w.kinds.end(), kind) != w.kinds.end())
      return &w;
  }
  return nullptr;
}

std::string_view api_group(std::string_view api_version) noexcept {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

// Kubernetes' own controllers and the Kubeflow training operator (v1 replica specs, MPIJob v2 too).
std::vector<WorkloadKind> default_workload_kinds() {
  return {
      {"apps", {"Deployment", "StatefulSet", "ReplicaSet"}, "spec.template", "replicas"},
      {"apps", {"DaemonSet"}, "spec.template", ""},
      {"batch", {"Job"}, "spec.template", "parallelism"},
      {"batch", {"CronJob"}, "spec.jobTemplate.spec.template", "parallelism"},
      {"kubeflow.org",
       {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"},
       "spec.*ReplicaSpecs.*.template",
       "replicas"},
  };
}

}  // namespace gpuadmit::policy
