// Decision: everything one evaluation found and changed. Pure data; the admission adapter and the CLI
// render it (AdmissionReview response, text, JSON, YAML).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// Which webhook role the evaluation plays. Mutate applies the safe fixes to a copy; Validate judges the
// object as it is (the final object, after every mutating webhook) and changes nothing.
enum class Mode : std::uint8_t { kMutate, kValidate };

struct Finding {
  std::string rule;  // catalogue id
  Action action = Action::kOff;
  std::string field;    // e.g. spec.containers[0].resources.limits
  std::string message;  // what, why, and the exact fix; may span lines
  std::string summary;  // one line, at most 120 characters: what a kubectl Warning shows
};

struct Fix {
  std::string rule;
  std::string field;
  std::string description;  // one line: what was changed, from what to what
};

struct Decision {
  std::vector<Finding> violations;   // enforce findings that were not fixed: the object is denied
  std::vector<Finding> warnings;     // warn findings: allowed, shown as kubectl warnings
  std::vector<Finding> audits;       // audit findings: allowed, logged and counted only
  std::vector<Fix> fixes;            // mutations applied (Mutate mode only)
  std::vector<std::string> notices;  // one-line notes for the user about fixes (e.g. defaults applied)
  nlohmann::json patch = nlohmann::json::array();  // RFC 6902 ops that apply the fixes (Mutate mode)
  std::vector<std::string> skipped_rules;  // cluster-aware rules that did not run for want of a cluster view
  bool evaluated = true;  // false when the object was skipped (excluded namespace, not a GPU kind)
  std::string skipped_reason;
  // "ReplicaSet/train-7d9f": the object's controller is a workload gpuadmit judges, so its warnings were
  // shown when the workload was applied and are not repeated here.
  std::string controller;

  [[nodiscard]] bool allowed() const noexcept { return violations.empty(); }
  [[nodiscard]] bool changed() const noexcept { return !fixes.empty(); }
  // Rule ids that reported or fixed anything, sorted and unique (for logs and metrics).
  [[nodiscard]] std::vector<std::string> rules_fired() const;
};

}  // namespace gpuadmit::policy
