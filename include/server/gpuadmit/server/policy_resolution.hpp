// Which policies are in force, from the policy objects in the cluster (#23 item 4), and what each object's
// status should say. A function of its inputs (the time comes in as text), so the rules below are tested
// without an API server:
//   - the cluster policy is the ClusterGPUPolicy named `cluster_policy_name` when there is one, else the
//     fallback (the --policy file, or the embedded default). Other ClusterGPUPolicies are NotSelected;
//   - an invalid version (one that got past the validating webhook: created while gpuadmit was down, or
//     before its CRDs had a webhook) leaves the last valid version of the same object in force;
//   - per namespace, the oldest GPUPolicy (creationTimestamp, then name) tightens the cluster policy for that
//     namespace; the others are Superseded. It is re-read onto every new cluster policy; when it no longer
//     tightens it (the cluster policy got stricter than it), its last valid version is tried, then none.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/policy/policy_set.hpp"

namespace gpuadmit::server {

// The last version of each object that loaded, by "Kind/namespace/name": kept between resolutions.
using LastValid = std::map<std::string, nlohmann::json, std::less<>>;

struct StatusUpdate {
  nlohmann::json object;  // as listed
  nlohmann::json status;  // the whole status to write
};

struct Resolution {
  policy::PolicySet policies;
  std::string source;  // what the cluster policy is, for logs: "ClusterGPUPolicy/default (generation 3)"
  std::vector<StatusUpdate> updates;  // only statuses that differ from what the objects hold
};

struct ResolutionInput {
  std::shared_ptr<const policy::RuleSet> fallback;
  std::string fallback_source;  // "policy file /etc/gpuadmit/policy.yaml", "embedded default policy"
  std::string cluster_policy_name;
  const std::vector<nlohmann::json>* cluster = nullptr;     // ClusterGPUPolicies
  const std::vector<nlohmann::json>* namespaced = nullptr;  // GPUPolicies
  std::string now;                                          // RFC 3339, for loadedAt and lastTransitionTime
};

Resolution resolve_policies(const ResolutionInput& input, LastValid& last_valid);

// The problems of a policy object as the validating webhook sees it: a ClusterGPUPolicy on its own, a
// GPUPolicy against `cluster` (the cluster policy in force).
std::vector<std::string> policy_object_problems(const nlohmann::json& object, const policy::RuleSet& cluster);

}  // namespace gpuadmit::server
