// What `gpuadmit check` and `gpuadmit test` share: reading manifests (files, directories, stdin), the
// policy and the cluster dump they are judged against, and checking every object with its location.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/policy_set.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::cli {

struct Source {
  std::string name;
  std::string text;
};

// Each path's text: a file, a directory's .yaml, .yml and .json files (recursively, sorted), or - (stdin).
// A source over 8 MiB is read one byte past the limit, so the document reader reports it.
Result<std::vector<Source>> read_sources(const std::vector<std::string>& paths);

// --policy's rules (a Policy file, or a ClusterGPUPolicy as `kubectl get -o yaml` prints it), or the embedded
// policy's without it.
Result<policy::RuleSet> load_rules(const std::optional<std::string>& policy_path);

// A namespace's GPUPolicy, as it tightened the cluster policy (for the text output).
struct NamespacePolicy {
  std::string namespace_;
  std::string name;
  std::string rules;  // its spec.rules, as one line of JSON
};

// The cluster policy, tightened per namespace by the GPUPolicies in `files` (--namespace-policy), exactly as
// `gpuadmit serve --policy-objects` would: each applies to its metadata.namespace (`default_namespace` when
// it names none), one per namespace. Errors name the file and the field's path.
Result<policy::PolicySet> load_policy_set(policy::RuleSet cluster, const std::vector<std::string>& files,
                                          const std::string& default_namespace,
                                          std::vector<NamespacePolicy>* applied = nullptr);
// Every object of the files, a List's items one by one (what --cluster FILE holds).
Result<std::vector<nlohmann::json>> read_objects(const std::vector<std::string>& paths);
// The view those objects make (their nodes, quotas, storage classes and claims); `path` names them in errors.
Result<policy::ClusterView> view_of(const nlohmann::json& objects, const std::string& path);
// --cluster's snapshot as the policy sees it; without it, a view with no snapshot.
Result<policy::ClusterView> load_view(const std::optional<std::string>& cluster_path);

// The cluster an apply of the input meets: --cluster's objects, then each input object of a kind the view
// holds (a ResourceClaimTemplate, a PersistentVolumeClaim, ...), added as `kubectl apply -f` creates the
// objects of a file in order. Without --cluster there is no view and nothing is added.
struct ClusterInput {
  std::string path;
  std::vector<nlohmann::json> objects;
  policy::ClusterView view;
};
Result<std::optional<ClusterInput>> load_cluster_input(const std::optional<std::string>& cluster_path);

struct Located {
  admission::CheckResult result;
  std::string source;  // "file:line" of the object
};

// Every object of every source, checked in order; the first that cannot be read or checked is the error,
// at its field's file:line:column.
// Each object is judged by the policy of its namespace (its own, else `default_namespace`), against the
// cluster as the objects before it left it (`cluster` grows by them; null: no view).
Result<std::vector<Located>> check_sources(const std::vector<Source>& sources,
                                           const policy::PolicySet& policies,
                                           const std::string& default_namespace, ClusterInput* cluster);

}  // namespace gpuadmit::cli
