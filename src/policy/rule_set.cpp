#include "gpuadmit/policy/rule_set.hpp"

#include <algorithm>

#include "gpuadmit/policy/catalogue.hpp"

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
  const RuleEntry* rule = find_rule(rule_id);
  return rule != nullptr ? rule->action(*this) : Action::kOff;
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
