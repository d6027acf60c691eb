// What one review may spend on device selectors, over all its pod templates and rules. A selector is capped
// on its own (kSelectorStepBudget), but nothing else bounds selectors × devices × templates: a tenant's claim
// of 32 selectors that name `uuid` is evaluated on every device, and took 41 s at 160 devices before this
// budget (gpuadmit_dra_review_bench). Past the budget, or past the review's deadline, the remaining selectors
// are not evaluated (they count as matching: an unsure "no" never denies), and the review says so
// (evaluate.cpp, dra-claims' overBudget action). The deadline is the adapter's clock, handed in as a
// function: the core reads no clock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace gpuadmit::policy {

class CompiledSelector;  // policy/device_cel.hpp

// About 80 ms of the dearest steps measured (matches() of a pattern of alternatives, 7.9 ms per million on
// the 2-core host), and 15 times what a claim that picks one GPU by uuid spends at 5,000 nodes of 8 GPUs
// (672,000 steps; gpuadmit_dra_review_bench).
inline constexpr std::int64_t kReviewStepBudget = 10'000'000;

class ReviewBudget {
 public:
  // `deadline_passed` (may be empty: no deadline) is asked before each selector's evaluation, which is
  // itself at most kSelectorStepBudget steps (a few milliseconds); `deadline` names it for people ("1s").
  explicit ReviewBudget(std::int64_t steps = kReviewStepBudget, std::function<bool()> deadline_passed = {},
                        std::string deadline = {});

  // The steps the next evaluation may use: 0 once the budget is spent or the deadline has passed.
  std::int64_t allowance();
  void spend(std::int64_t steps);
  [[nodiscard]] std::int64_t spent() const noexcept { return spent_; }
  // Empty while within budget; else why the rest was not evaluated ("not evaluated: ...").
  [[nodiscard]] const std::string& exhausted() const noexcept { return exhausted_; }

  // The selectors this review has compiled, by expression (compile_for_review, device_cel.hpp): a template's
  // selectors are read by several rules and passes, and a regular expression costs far more to compile
  // than to run.
  [[nodiscard]] std::shared_ptr<const CompiledSelector> compiled(std::string_view expression) const;
  void keep_compiled(std::string expression, std::shared_ptr<const CompiledSelector> selector);

 private:
  std::int64_t limit_;
  std::int64_t spent_ = 0;
  std::function<bool()> deadline_passed_;
  std::string deadline_;
  std::string exhausted_;
  std::map<std::string, std::shared_ptr<const CompiledSelector>, std::less<>> compiled_;
};

}  // namespace gpuadmit::policy
