// Device selectors: the functions of the subset, on evaluated arguments: size, the string functions,
// matches (through device_cel_regex.cpp), and Kubernetes' quantity and semver libraries with their methods.
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_cel_ast.hpp"
#include "device_cel_eval.hpp"
#include "gpuadmit/policy/text.hpp"

namespace gpuadmit::policy::cel {
namespace {

Outcome matches(const Node& n, const std::string& subject, const std::string& pattern, StepBudget& budget) {
  std::shared_ptr<const Regex> regex = n.regex;
  if (!regex) {
    if (!n.regex_not_evaluated.empty()) return not_evaluated(n.regex_not_evaluated);
    if (!budget.charge(static_cast<std::int64_t>(pattern.size()) * 8)) return budget_exceeded();
    auto translated = translate_re2(pattern);
    if (auto* why = std::get_if<std::string>(&translated)) return not_evaluated(*why);
    regex = std::get<std::shared_ptr<const Regex>>(translated);
  }
  // libstdc++'s breadth-first executor spends ~15 ns per byte and live state at -O2: 4 steps each.
  if (!budget.charge(static_cast<std::int64_t>(subject.size() + 1) * regex->size * 4))
    return budget_exceeded();
  auto found = search(*regex, subject);
  if (auto* why = std::get_if<std::string>(&found)) return not_evaluated(*why);
  return of(std::get<bool>(found));
}

Outcome quantity(const std::string& text, bool test_only) {
  auto parsed = k8s::Quantity::parse(text);
  if (parsed) return test_only ? of(true) : of(*parsed);
  // k8s::Quantity accepts exactly what ParseQuantity does except for its stated limits (64 characters,
  // 10^21 units); a text with a character no quantity can hold fails in Kubernetes too, with this error.
  const bool impossible =
      text.empty() || text.find_first_not_of("+-0123456789.eEinumkKMGTP") != std::string::npos;
  if (!impossible)
    return not_evaluated("not evaluated: quantity \"" + text + "\" is beyond gpuadmit's quantity range");
  if (test_only) return of(false);
  return error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

Outcome quantity_method(const std::string& f, const k8s::Quantity& q, const std::vector<Value>& args) {
  if (f == "compareTo" || f == "isGreaterThan" || f == "isLessThan") {
    const auto* other = as<k8s::Quantity>(args[1]);
    if (other == nullptr) return no_overload();
    const int c = q < *other ? -1 : (*other < q ? 1 : 0);
    if (f == "compareTo") return of(static_cast<std::int64_t>(c));
    return of(f == "isGreaterThan" ? c == 1 : c == -1);
  }
  if (f == "sign") return of(static_cast<std::int64_t>(q.is_negative() ? -1 : (q.is_zero() ? 0 : 1)));
  if (f == "asInteger" || f == "isInteger") {
    constexpr k8s::Int128 kNano = 1'000'000'000;
    const k8s::Int128 units = q.nanos() / kNano;
    const bool fits = q.nanos() % kNano == 0 && units <= std::numeric_limits<std::int64_t>::max() &&
                      units >= std::numeric_limits<std::int64_t>::min();
    if (f == "isInteger") return of(fits);
    if (!fits) return error("cannot convert value to integer");
    return of(static_cast<std::int64_t>(units));
  }
  return no_overload();
}

Outcome semver_method(const std::string& f, const Semver& v, const std::vector<Value>& args) {
  if (f == "compareTo" || f == "isGreaterThan" || f == "isLessThan") {
    const auto* other = as<Semver>(args[1]);
    if (other == nullptr) return no_overload();
    const int c = compare(v, *other);
    if (f == "compareTo") return of(static_cast<std::int64_t>(c));
    return of(f == "isGreaterThan" ? c == 1 : c == -1);
  }
  if (f == "major") return of(static_cast<std::int64_t>(v.major));
  if (f == "minor") return of(static_cast<std::int64_t>(v.minor));
  if (f == "patch") return of(static_cast<std::int64_t>(v.patch));
  return no_overload();
}

}  // namespace

Outcome call_function(const Node& n, const std::vector<Value>& args, StepBudget& budget) {
  const std::string& f = n.name;
  const Value& first = args[0];
  const auto* s = as<std::string>(first);
  if (f == "size") {
    if (s != nullptr) {
      if (!budget.charge(static_cast<std::int64_t>(s->size() / 16))) return budget_exceeded();
      return of(static_cast<std::int64_t>(rune_count(*s)));
    }
    if (const auto* list = as<std::shared_ptr<const ValueList>>(first))
      return of(static_cast<std::int64_t>((*list)->size()));
    if (const auto* map = as<MapRef>(first)) return of(static_cast<std::int64_t>(map->map->size()));
    return no_overload();
  }
  if (f == "startsWith" || f == "endsWith" || f == "contains" || f == "matches") {
    const auto* t = args.size() > 1 ? as<std::string>(args[1]) : nullptr;
    if (s == nullptr || t == nullptr) return no_overload();
    if (f == "matches") return matches(n, *s, *t, budget);
    if (!budget.charge(static_cast<std::int64_t>((s->size() + 1) * (t->size() + 1) / 64)))
      return budget_exceeded();
    if (f == "startsWith") return of(std::string_view(*s).substr(0, t->size()) == *t);
    if (f == "endsWith")
      return of(s->size() >= t->size() && s->compare(s->size() - t->size(), t->size(), *t) == 0);
    return of(s->find(*t) != std::string::npos);
  }
  if (f == "lowerAscii" || f == "upperAscii") {
    if (s == nullptr) return no_overload();
    if (!budget.charge(static_cast<std::int64_t>(s->size() / 16))) return budget_exceeded();
    std::string out = *s;
    for (char& c : out) {
      if (f == "lowerAscii" && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (f == "upperAscii" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return of(std::move(out));
  }
  if (f == "quantity" || f == "isQuantity") {
    if (s == nullptr) return no_overload();
    return quantity(*s, f == "isQuantity");
  }
  if (f == "semver" || f == "isSemver") {
    const bool* normalize = args.size() > 1 ? as<bool>(args[1]) : nullptr;
    if (s == nullptr || (args.size() > 1 && normalize == nullptr)) return no_overload();
    auto version = parse_semver(*s, normalize != nullptr && *normalize);
    if (f == "isSemver") return of(version.ok());
    if (!version) return error(version.error().message);
    return of(*std::move(version));
  }
  if (const auto* q = as<k8s::Quantity>(first)) return quantity_method(f, *q, args);
  if (const auto* v = as<Semver>(first)) return semver_method(f, *v, args);
  return no_overload();
}

Outcome name_overload(const Node& n, Outcome result, const std::string& call_types) {
  if (result.state != Outcome::State::kError || result.message != "no such overload") return result;
  static constexpr std::array<std::string_view, 10> kNamed{
      "compareTo",  "isGreaterThan", "isLessThan", "asInteger", "isInteger",
      "lowerAscii", "upperAscii",    "major",      "minor",     "patch"};
  if (n.name == "size") return error("no such overload: size");
  if (std::find(kNamed.begin(), kNamed.end(), n.name) == kNamed.end()) return result;
  return error("no such overload: " + n.name + "(" + call_types + ")");
}

}  // namespace gpuadmit::policy::cel
