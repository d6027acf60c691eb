// PolicySet: the policies in force at one moment. The cluster's (a ClusterGPUPolicy, the policy file or the
// embedded default), and for each namespace with a GPUPolicy, that namespace's own: the cluster policy as the
// GPUPolicy tightened it (config::load_policy_object). The server swaps a whole PolicySet when any policy
// changes, so one request never sees a cluster policy together with a namespace policy built from another.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

struct PolicySet {
  std::shared_ptr<const RuleSet> cluster;
  std::map<std::string, std::shared_ptr<const RuleSet>, std::less<>> namespaces;

  // The policy of objects in `ns` ("" for cluster-scoped ones): its namespace's, else the cluster's.
  [[nodiscard]] const RuleSet& for_namespace(std::string_view ns) const;

  // A set of `rules` alone, which it does not own: for callers that judge with one policy (check, tests).
  static PolicySet of(const RuleSet& rules);
  // A temporary would be gone before the set is used.
  static PolicySet of(RuleSet&&) = delete;
};

}  // namespace gpuadmit::policy
