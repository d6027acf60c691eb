// Device selectors: what the evaluator (device_cel_eval.cpp) and the functions it calls
// (device_cel_functions.cpp) share: a sub-expression's outcome and the step budget.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "device_cel_ast.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy::cel {

// A value, an error (cel-go's message) or "not evaluated".
struct Outcome {
  using State = Evaluation::State;
  State state = State::kValue;
  Value value;
  std::string message;

  [[nodiscard]] bool ok() const { return state == State::kValue; }
};

inline Outcome of(Value v) {
  return Outcome{Outcome::State::kValue, std::move(v), {}};
}
template <typename T>
Outcome of(T v) {
  return of(Value{std::move(v)});
}
inline Outcome error(std::string message) {
  return Outcome{Outcome::State::kError, {}, std::move(message)};
}
inline Outcome no_overload() {
  return error("no such overload");
}
inline Outcome not_evaluated(std::string why) {
  return Outcome{Outcome::State::kNotEvaluated, {}, std::move(why)};
}

template <typename T>
const T* as(const Value& v) {
  return std::get_if<T>(&v.v);
}

// The steps an evaluation has used, against its limit (kSelectorStepBudget, or less of a review's budget).
class StepBudget {
 public:
  explicit StepBudget(std::int64_t limit = kSelectorStepBudget) : limit_(limit) {}
  // Adds `steps`; false once the budget is spent.
  bool charge(std::int64_t steps) {
    steps_ += steps;
    return steps_ <= limit_;
  }
  [[nodiscard]] std::int64_t steps() const { return steps_; }

 private:
  std::int64_t limit_;
  std::int64_t steps_ = 0;
};
inline Outcome budget_exceeded() {
  return not_evaluated("not evaluated: exceeded the step budget of " + std::to_string(kSelectorStepBudget));
}

// The call node `n` on its evaluated arguments (the receiver first): size, the string functions, matches,
// and the Kubernetes quantity and semver libraries (device_cel_functions.cpp).
Outcome call_function(const Node& n, const std::vector<Value>& args, StepBudget& budget);
// cel-go's dispatcher names the overload it could not find for the Kubernetes library functions and size
// ("no such overload: compareTo(kubernetes.Quantity, int)", `call_types` the arguments' type names); the
// standard string functions fail with the bare text.
Outcome name_overload(const Node& n, Outcome result, const std::string& call_types);

}  // namespace gpuadmit::policy::cel
