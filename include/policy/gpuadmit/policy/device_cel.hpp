// Device selectors: the CEL expressions DRA users write in ResourceClaim device requests
// (spec.devices.requests[].exactly.selectors[].cel.expression), evaluated against one device the way
// k8s.io/dynamic-resource-allocation/cel (v0.35) does, for a subset of CEL that covers the selectors people
// write. What is outside the subset is never guessed at: it comes back as kNotEvaluated with the reason, and
// the caller must not deny on it.
//
// Supported: `device.driver`, `device.allowMultipleAllocations`, `device.attributes["DOMAIN"].NAME` and
// `["NAME"]`, `device.capacity["DOMAIN"].NAME`; int, uint, double, string (all quote forms and escapes,
// raw strings), bool and list literals; `== != < <= > >= in && || ! ?: -` and parentheses; `has(x.f)`,
// `cel.bind(v, init, body)`; size, startsWith, endsWith, contains, matches, lowerAscii, upperAscii;
// quantity, isQuantity, sign(q) and a Quantity's compareTo, isGreaterThan, isLessThan, asInteger, isInteger;
// semver (with the normalize flag), isSemver and a Semver's compareTo, isGreaterThan, isLessThan, major,
// minor, patch. Checked against Kubernetes itself by tests/differential/dracel: every result, every
// evaluation error message, and every compile error on the cases it draws.
//
// Semantics follow cel-go as Kubernetes configures it, including the corners that surprise people:
// - `&&` and `||` are commutative over errors: `error || true` is true, `error && false` is false;
// - equality is heterogeneous: `1 == "1"` is false, `1 == 1.0` true, but a version attribute compared with
//   a string is an error (`no such overload`) with `==` and true with `!=`, as in cel-go;
// - an unknown domain in device.attributes/capacity is an empty map, so `.x` on it is `no such key: x`, and
//   `has(device.attributes.anything)` is true (Kubernetes' default-map lookup always "finds");
// - an unqualified attribute or capacity name belongs to the device's driver domain;
// - `x in []` is false even when x is an error (cel-go plans literal lists as constant sets);
// - what cel-go's checker rejects is a compile error here too: list literals mixing types (an attribute's
//   `any` included), operands with no overload (`quantity(...) > quantity(...)`), a non-bool result type.
//
// Not evaluated (the result says why): macros (exists, all, map, filter...), arithmetic, map literals,
// null, bytes, optional syntax, other Kubernetes CEL libraries and functions, a regular expression beyond the
// RE2 subset that std::regex reproduces exactly (see device_cel_regex.cpp; a literal one makes the whole
// selector not evaluated, since cel-go may reject it at compile time), non-ASCII text given to matches,
// quantity asApproximateFloat/add/sub, a version in a list literal, and expressions past the limits below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/dra_objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/review_budget.hpp"

namespace gpuadmit::policy {

// Kubernetes rejects longer selector expressions (resource.k8s.io CELSelectorExpressionMaxLength).
inline constexpr std::size_t kMaxSelectorLength = 10 * 1024;
// Nesting of the syntax tree (parentheses, operators, member chains; a flat `a && b && ...` is one level).
// cel-go's parser has its own recursion limit; ours keeps the recursive parser and evaluator far from the
// stack's end, and selectors nest a handful deep.
inline constexpr int kMaxSelectorDepth = 100;
// Evaluation steps: one per node visited, plus the work of string functions: bytes/16 for size, case
// mapping and ordering, (n+1)(m+1)/64 for startsWith/endsWith/contains, and 4 × subject bytes × automaton
// size for matches. Kubernetes caps a selector at 1,000,000 CEL cost units (CELSelectorExpressionMaxCost),
// units of about the same size, so selectors Kubernetes runs within its limit stay well inside ours; and a
// million steps take at most a few milliseconds (measured at -O2 on the 2-core host: the NVIDIA demo's
// productName-regex-and-memory selector, 1,076 steps in 4 µs; a budget spent on regular expressions, the
// dearest step, 1.8 ms; on contains(), 4 µs), so a hostile expression cannot hold admission. Node visits
// alone cannot get near it: 10 KiB of expression has at most ~10,000 nodes. Past the budget the outcome is
// kNotEvaluated, not an error: Kubernetes' cost model differs and might have let it run.
inline constexpr std::int64_t kSelectorStepBudget = 1'000'000;

// The device as a selector sees it (k8s/dra_objects.hpp): driver, attributes and capacity.
using k8s::AttributeValue;
using k8s::DeviceView;
using k8s::VersionText;

struct SelectorOutcome {
  enum class Kind : std::uint8_t { kTrue, kFalse, kError, kNotEvaluated };
  Kind kind = Kind::kNotEvaluated;
  // kError: cel-go's message ("no such key: gpuModel", "no such overload"); kNotEvaluated: "not evaluated:
  // <why>"; empty otherwise.
  std::string message;
  std::int64_t steps = 0;  // steps used, for tests and metrics
};

namespace cel {
struct Program;  // the checked syntax tree, src/policy/device_cel_ast.hpp
}

// A selector parsed and checked once, evaluated against any number of devices. Cheap to copy (shared and
// immutable). When part of it is outside the subset, not_evaluated() says why and evaluate() returns that.
// An attribute a selector requires to equal a string: `device.attributes["gpu.nvidia.com"].uuid == "GPU-…"`
// (or ["uuid"], either side of ==), the whole expression or a term of its top-level &&. CEL's && is false
// when any term is false, whatever the others do, so the selector is false on every device whose
// attribute (domain, name), as the selector reads it, holds another string: no need to evaluate it there.
struct AttributePin {
  std::string domain;
  std::string name;
  std::string value;
};

class CompiledSelector {
 public:
  [[nodiscard]] const std::string& expression() const noexcept { return expression_; }
  // Non-empty when this selector will not be evaluated: "not evaluated: <why>".
  [[nodiscard]] const std::string& not_evaluated() const noexcept { return not_evaluated_; }

 private:
  friend Result<CompiledSelector> compile_selector(std::string_view expression);
  friend CompiledSelector not_compiled(std::string_view expression, std::string why);
  friend std::optional<AttributePin> attribute_pin(const CompiledSelector& selector);
  friend SelectorOutcome evaluate(const CompiledSelector& selector, const DeviceView& device,
                                  ReviewBudget* review);
  std::string expression_;
  std::string not_evaluated_;
  std::shared_ptr<const cel::Program> program_;
};

// An error when Kubernetes itself rejects the expression when it compiles it (syntax error, a result that
// cannot be bool, an undefined field of `device`, operands whose types have no overload), with cel-go's
// wording where it is short ("Syntax error: ...", "must evaluate to bool or the unknown type, not int").
Result<CompiledSelector> compile_selector(std::string_view expression);
// The selector's pin, if it has one (the first, in the order of its && terms).
std::optional<AttributePin> attribute_pin(const CompiledSelector& selector);
// Whether `device`'s attribute, as the selector reads it, is a string other than the pin's: then the
// selector is false on it.
bool pin_excludes(const AttributePin& pin, const k8s::Device& device);
// A selector a review had no budget left to compile: evaluate() says `why` ("not evaluated: ...").
CompiledSelector not_compiled(std::string_view expression, std::string why);
// What compiling a selector charges a review, per byte of expression: compiling costs up to 1.3 µs a byte
// (regular expressions, the dearest; 32 selectors of 10 KiB, each ~400 distinct matches(), took 425 ms
// on the 2-core host), about 160 of the dearest evaluation steps.
inline constexpr std::int64_t kCompileStepsPerByte = 200;

// Whether the device matches, as DeviceMatches would say; never throws.
SelectorOutcome evaluate(const CompiledSelector& selector, const DeviceView& device);
// The same within what is left of `review` (none: the selector's own budget alone), which it charges. Once
// the review's budget is spent or its deadline passed, kNotEvaluated with the review's reason.
SelectorOutcome evaluate(const CompiledSelector& selector, const DeviceView& device, ReviewBudget* review);

// compile_selector then evaluate; a compile error is a kError outcome.
SelectorOutcome evaluate_selector(std::string_view expression, const DeviceView& device);

}  // namespace gpuadmit::policy
