// What `gpuadmit check` and `gpuadmit test` share: reading manifests (files, directories, stdin), the
// policy and the cluster dump they are judged against, and checking every object with its location.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::cli {

struct Source {
  std::string name;
  std::string text;
};

// Each path's text: a file, a directory's .yaml, .yml and .json files (recursively, sorted), or - (stdin).
// A source over 8 MiB is read one byte past the limit, so the document reader reports it.
Result<std::vector<Source>> read_sources(const std::vector<std::string>& paths);

// --policy's rules, or the embedded policy's without it.
Result<policy::RuleSet> load_rules(const std::optional<std::string>& policy_path);
// --cluster's snapshot as the policy sees it; without it, a view with no snapshot.
Result<policy::ClusterView> load_view(const std::optional<std::string>& cluster_path);

struct Located {
  admission::CheckResult result;
  std::string source;  // "file:line" of the object
};

// Every object of every source, checked in order; the first that cannot be read or checked is the error,
// at its field's file:line:column.
Result<std::vector<Located>> check_sources(const std::vector<Source>& sources, const policy::RuleSet& rules,
                                           const std::string& default_namespace,
                                           const policy::ClusterView* view);

}  // namespace gpuadmit::cli
