// What a review that ran out of its selector budget or deadline says (policy/review_budget.hpp): never a
// silent allow.
#pragma once

#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/review_budget.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// Adds dra-claims' overBudget finding to `decision` when `budget` was exhausted.
void report_over_budget(const ReviewBudget& budget, const RuleSet& rules, Decision& decision);

}  // namespace gpuadmit::policy
