// The rule catalogue: the one place a rule's identity is written. Everything users and code see about the
// set of rules derives from this table: the evaluation order, which rules need the cluster view, the action
// a policy gives each, the reader of its `spec.rules.<id>` settings, the lists shown by `serve`, `check` and
// the docs, and the docs test.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/parameters.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

class RuleContext;  // private to the policy layer (src/policy/rule_context.hpp)

struct RuleEntry {
  std::string_view id;  // stable and user-facing
  // Needs the cluster view: skipped, and said so, when there is none.
  bool cluster_aware = false;
  // docs/policy.md#<anchor>: the section that documents the rule (its "### `id`" heading).
  std::string_view doc_anchor;
  Action (*action)(const RuleSet&) = nullptr;          // the action the policy gives the rule
  void (*read)(ParameterReader&, RuleSet&) = nullptr;  // its spec.rules.<id> settings
  void (*run)(RuleContext&) = nullptr;                 // on a pod (or a workload's pod template)
  // The kinds of the view its verdicts rest on: when one of them is stale, they follow spec.cluster.onStale.
  // `reads_for_claims` are read only for a pod that uses DRA claims.
  ViewKinds reads = 0;
  ViewKinds reads_for_claims = 0;
};

// Every rule, in evaluation order (mutations apply in this order on every invocation).
std::span<const RuleEntry> rule_catalogue() noexcept;
// The entry for `id`, or nullptr.
const RuleEntry* find_rule(std::string_view id) noexcept;
// The cluster-aware rules in catalogue order, for what users are told ("gpu-type, cuda-driver, ...").
std::string cluster_aware_rule_list();
// Every id in catalogue order, comma-separated (error messages that list the known rules).
std::string rule_id_list();

}  // namespace gpuadmit::policy
