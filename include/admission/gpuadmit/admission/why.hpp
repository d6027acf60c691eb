// `gpuadmit why`: why a GPU pod is stuck or was killed, or why a workload has no pods, read from what the
// cluster already says (the pod's status, the events about it and the objects it controls) and explained
// with the rules admission runs: each cause quotes Kubernetes, names the rule that would have prevented it
// at admission, and gives the fix. Pure: the CLI lists the objects, live or from a saved List.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/policy_set.hpp"

namespace gpuadmit::admission {

struct WhyInput {
  nlohmann::json object;               // the pod or workload asked about
  std::vector<nlohmann::json> events;  // core/v1 Events of its namespace (those about it are picked)
  std::vector<nlohmann::json> owned;   // objects of its namespace it may control (ReplicaSets, Jobs, Pods)
};

struct Cause {
  std::string title;  // "not scheduled", "OOMKilled", "no pods: the webhook denied them"
  std::string quote;  // what Kubernetes said, verbatim ("0/3 nodes are available: ...")
  std::string explanation;
  std::string fix;   // the exact change, a YAML snippet or a command
  std::string rule;  // the gpuadmit rule that would have caught it at admission ("" when none)
};

struct Diagnosis {
  std::string object;  // "pod/ml-team/trainer-0"
  std::string state;   // "Pending", "Running", "Failed (OOMKilled)", "no pods"
  std::vector<Cause> causes;
};

// Walks the decision tree: not scheduled (the scheduler's words, then what node-fit, gpu-tolerations and the
// other rules find on this cluster), killed (OOMKilled, evicted), a workload whose pods were refused (its
// and its controllers' FailedCreate events), CUDA and driver. An error when the object cannot be read.
Result<Diagnosis> diagnose(const WhyInput& input, const policy::PolicySet& policies,
                           const policy::ClusterView* view);

nlohmann::json to_json(const Diagnosis& diagnosis);
std::string to_text(const Diagnosis& diagnosis);

}  // namespace gpuadmit::admission
