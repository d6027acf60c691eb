// Test helpers for rule tests: a cluster view from a fixture list, a policy from YAML, and one manifest
// object run the way the API server would run it (mutate, then validate), as `gpuadmit check` does.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"

namespace gpuadmit::test {

// tests/fixtures/cluster/<name>.yaml as the cluster view.
inline policy::ClusterView view_of(const std::string& name) {
  auto snapshot = policy::snapshot_from_list(fixture("cluster/" + name + ".yaml"));
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return policy::ClusterView{std::make_shared<const policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

// The default policy with `rules_yaml` (the body of spec.rules, indented by four spaces) over it.
inline policy::RuleSet policy_with(const std::string& rules_yaml) {
  if (rules_yaml.empty()) return config::default_rule_set();
  auto rules = config::load_policy(
      "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  rules:\n" + rules_yaml, "<test>");
  if (!rules) throw std::runtime_error(rules.error().message);
  return std::move(*rules);
}

inline admission::CheckResult check(const nlohmann::json& object, const policy::RuleSet& rules,
                                    const policy::ClusterView* view) {
  auto r = admission::check_object(object, rules, "ml-team", view);
  if (!r) throw std::runtime_error(r.error().message);
  return std::move(*r);
}

// Every violation, warning and notice as one text, for Contains checks.
inline std::string all_text(const admission::CheckResult& r) {
  std::string out;
  for (const auto& v : r.violations) out += "[" + v.rule + "] " + v.message + "\n";
  for (const auto& w : r.warnings) out += w + "\n";
  return out;
}

// The full messages of what the mutating evaluation denied or warned (CheckResult keeps warnings as their
// one-line summaries).
inline std::string messages(const nlohmann::json& object, const policy::RuleSet& rules,
                            const policy::ClusterView* view) {
  auto decision = policy::evaluate({object, "ml-team", policy::Mode::kMutate, view}, rules);
  if (!decision) throw std::runtime_error(decision.error().message);
  std::string out;
  for (const auto& f : decision->violations) out += "[" + f.rule + "] " + f.message + "\n";
  for (const auto& f : decision->warnings) out += "[" + f.rule + "] " + f.message + "\n";
  return out;
}

}  // namespace gpuadmit::test
