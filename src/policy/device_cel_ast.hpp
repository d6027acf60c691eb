// The inside of device selectors (gpuadmit/policy/device_cel.hpp): values, the checked syntax tree, and the
// entry points the parser (device_cel_parse.cpp), the checker (device_cel_check.cpp), the evaluator
// (device_cel_eval.cpp, device_cel_functions.cpp), the value library (device_cel_values.cpp) and the
// regular-expression translator (device_cel_regex.cpp) share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::policy::cel {

// ASCII digits, as the lexer and the regular-expression translator read them.
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// github.com/blang/semver/v4's Version, the type behind Kubernetes' CEL semver library. Build metadata is
// kept out: it takes no part in comparison or equality.
struct Semver {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  std::vector<std::string> pre;  // pre-release identifiers
};
// semver.Parse (strict "MAJOR.MINOR.PATCH[-pre][+build]"), with its error texts; `normalize` is the second
// argument of CEL's semver(): a leading "v", leading zeros and a missing minor or patch are accepted.
Result<Semver> parse_semver(std::string_view text, bool normalize);
int compare(const Semver& a, const Semver& b) noexcept;  // -1, 0, 1, as Version.Compare

struct Value;
using ValueMap = std::map<std::string, Value, std::less<>>;
using ValueList = std::vector<Value>;
// A map of the device. Kubernetes wraps the two outer maps (domain → names) so that a lookup of an unknown
// domain "finds" an empty map; `finds_everything` marks those.
struct MapRef {
  const ValueMap* map = nullptr;
  bool finds_everything = false;
};
struct DeviceRef {};  // the `device` variable itself; its fields are read from the evaluation's context

struct Value {
  std::variant<bool, std::int64_t, std::uint64_t, double, std::string, std::shared_ptr<const ValueList>,
               MapRef, k8s::Quantity, Semver, DeviceRef>
      v;
};
// CEL's name of a value's type, as in "CEL result of type list could not be converted to bool".
std::string type_name(const Value& value);

// Static types, as far as the checker knows them: kDyn for anything read from an attribute.
enum class Type : std::uint8_t {
  kDyn,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kList,
  kQuantity,
  kSemver,
  kDevice,
  kAttributesByDomain,
  kAttributes,
  kCapacityByDomain,
  kCapacity,
};
std::string_view type_name(Type type) noexcept;

enum class NodeKind : std::uint8_t {
  kLiteral,
  kIdent,
  kLocal,
  kSelect,
  kIndex,
  kCall,
  kList,
  kAnd,
  kOr,
  kNot,
  kNegate,
  kConditional,
  kEquals,
  kNotEquals,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kIn,
  kHas,
  kBind,
};

// A regular expression literal, translated once (device_cel_regex.cpp).
struct Regex {
  std::regex compiled;
  std::int64_t size = 0;  // automaton size estimate, the per-byte cost of matching
};
// The regex, or why it is not evaluated ("not evaluated: ...").
std::variant<std::shared_ptr<const Regex>, std::string> translate_re2(std::string_view pattern);
// Whether `subject` contains a match, or why it is not evaluated; std::regex never throws out of here.
std::variant<bool, std::string> search(const Regex& regex, std::string_view subject);

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  std::size_t offset = 0;  // byte offset in the expression
  int depth = 1;
  Type type = Type::kDyn;
  Type element = Type::kDyn;  // kList: the elements' type when the literal says
  Value literal;
  std::string name;         // identifier, field, function, bound variable
  bool has_target = false;  // kCall: receiver-style call, children[0] is the receiver
  int slot = -1;            // kLocal and kBind: index of the bound variable
  std::vector<std::unique_ptr<Node>> children;
  std::shared_ptr<const Regex> regex;  // kCall matches with a literal pattern
  std::string regex_not_evaluated;
};

struct Program {
  std::unique_ptr<Node> root;
  int locals = 0;
};

// The device as DeviceMatches builds it: domain → name → value (device_cel.cpp).
struct DeviceData {
  std::string driver;
  bool allow_multiple_allocations = false;
  std::map<std::string, ValueMap, std::less<>> attributes;
  std::map<std::string, ValueMap, std::less<>> capacity;
  ValueMap attributes_by_domain;
  ValueMap capacity_by_domain;
};

// What a program makes of a device (device_cel_eval.cpp): a value, an error, or "not evaluated".
struct Evaluation {
  enum class State : std::uint8_t { kValue, kError, kNotEvaluated };
  State state = State::kValue;
  Value value;
  std::string message;
  std::int64_t steps = 0;
};
// At most `limit` steps (kSelectorStepBudget, or what is left of a review's budget).
Evaluation run(const Program& program, const DeviceData& device, std::int64_t limit);

// Why a compile stops: a Kubernetes compile error (`unsupported` false) or a construct outside the subset.
struct CompileStop {
  bool unsupported = false;
  std::string message;
};
// The syntax tree of `text`, unchecked (device_cel_parse.cpp); throws CompileStop.
std::unique_ptr<Node> parse_expression(std::string_view text);
// Parses and checks; CompileStop on failure. Never throws.
std::variant<Program, CompileStop> compile_program(std::string_view expression);

}  // namespace gpuadmit::policy::cel
