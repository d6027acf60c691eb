// What the API server would do with one manifest object, without an API server: run the mutating
// evaluation, apply its fixes, then run the validating evaluation on the result. `gpuadmit check`, the
// benchmarks and the golden tests all use this, so offline verdicts match the webhook's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::admission {

struct CheckResult {
  std::string kind;
  std::string namespace_;
  std::string name;
  bool checked = true;  // false: a kind gpuadmit does not judge, or an excluded namespace
  std::string skipped_reason;
  bool allowed = true;
  std::vector<policy::Finding> violations;     // from validation of the fixed object
  std::vector<std::string> warnings;           // notices from mutation, then warn findings from validation
  std::vector<std::string> warned_rules;       // the rules of the warn findings, in their order
  std::vector<policy::Finding> warn_findings;  // those findings whole (gpuadmit audit reports them)
  std::vector<policy::Finding> audits;
  std::vector<policy::Fix> fixes;
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 ops from the original to `fixed`
  nlohmann::json fixed;                            // the object as it would be stored
  std::vector<std::string> skipped_rules;          // cluster-aware rules skipped for want of a cluster view
  std::string controller;  // set when warnings were left to the workload that owns the object
};

// `default_namespace` stands in for the request namespace when the manifest names none (kubectl's
// current-namespace behaviour). An error means the object is malformed (e.g. a string where a list goes).
Result<CheckResult> check_object(const nlohmann::json& object, const policy::RuleSet& rules,
                                 const std::string& default_namespace,
                                 const policy::ClusterView* cluster = nullptr);

}  // namespace gpuadmit::admission
