#include "gpuadmit/policy/review_budget.hpp"

#include <string>
#include <utility>

namespace gpuadmit::policy {

ReviewBudget::ReviewBudget(std::int64_t steps, std::function<bool()> deadline_passed, std::string deadline)
    : limit_(steps), deadline_passed_(std::move(deadline_passed)), deadline_(std::move(deadline)) {}

std::int64_t ReviewBudget::allowance() {
  if (!exhausted_.empty()) return 0;
  if (deadline_passed_ && deadline_passed_()) {
    exhausted_ = "not evaluated: the review passed its deadline" +
                 (deadline_.empty() ? std::string() : " of " + deadline_);
    return 0;
  }
  return limit_ - spent_;
}

void ReviewBudget::spend(std::int64_t steps) {
  spent_ += steps;
  if (spent_ >= limit_ && exhausted_.empty())
    exhausted_ =
        "not evaluated: the review spent its budget of " + std::to_string(limit_) + " selector steps";
}

std::shared_ptr<const CompiledSelector> ReviewBudget::compiled(std::string_view expression) const {
  const auto it = compiled_.find(expression);
  return it == compiled_.end() ? nullptr : it->second;
}

void ReviewBudget::keep_compiled(std::string expression, std::shared_ptr<const CompiledSelector> selector) {
  compiled_.insert_or_assign(std::move(expression), std::move(selector));
}

}  // namespace gpuadmit::policy
