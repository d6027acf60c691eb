#include "over_budget.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "gpuadmit/policy/text.hpp"

namespace gpuadmit::policy {

// A review that ran out of budget or time counted the selectors it did not evaluate as matching: never a
// silent allow, so it says so, as dra-claims' overBudget action (warn by default; enforce fails closed).
void report_over_budget(const ReviewBudget& budget, const RuleSet& rules, Decision& decision) {
  // Never more than the rule's own action, as noNodeOffers is never more than node-fit's.
  const Action action = std::min(rules.dra_claims.action, rules.dra_claims.over_budget);
  if (budget.exhausted().empty() || action == Action::kOff) return;
  const std::string why = budget.exhausted().substr(std::string_view("not evaluated: ").size());
  const std::string then = action == Action::kEnforce
                               ? " The policy denies such pods (dra-claims overBudget: enforce)."
                               : " If they fit none, the pod waits in Pending.";
  std::string message = "not every device selector of the pod's claims was evaluated (" + why +
                        "): the devices not checked count as matching, so whether the claims fit a node is "
                        "not known." +
                        then +
                        "\nFix: use fewer or cheaper selectors. One that names an attribute each device "
                        "carries alone (uuid) is evaluated on every device, and regular expressions cost the "
                        "most (docs/reliability.md, \"What one review may cost\").";
  // The Warning line must carry the reason whole: 120 characters at most.
  Finding finding{"dra-claims", action, "spec.resourceClaims", std::move(message),
                  one_line("dra-claims: selectors not evaluated: " + why)};
  if (action == Action::kEnforce) {
    decision.violations.push_back(std::move(finding));
  } else if (action == Action::kWarn) {
    decision.warnings.push_back(std::move(finding));
  } else {
    decision.audits.push_back(std::move(finding));
  }
}

}  // namespace gpuadmit::policy
