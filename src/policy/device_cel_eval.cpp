// Device selectors: the evaluator, cel-go's interpreter semantics for the subset. A result is a value, an
// error (cel-go's message) or "not evaluated", which behaves like cel-go's unknown: `||` and `&&` let a
// decisive term win over it, anything else carries it to the top, because the missing part might have been
// any value or error.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "device_cel_ast.hpp"
#include "device_cel_eval.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy {
namespace cel {
namespace {

const ValueMap kEmptyMap;

// Numeric comparison across int, uint and double, as cel-go with CrossTypeNumericComparisons.
std::optional<int> compare_numbers(const Value& a, const Value& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.v.index() > 3 || b.v.index() > 3 || a.v.index() == 0 || b.v.index() == 0) return std::nullopt;
  if (const auto* x = as<std::int64_t>(a)) {
    if (const auto* y = as<std::int64_t>(b)) return sign(*x, *y);
    if (const auto* y = as<std::uint64_t>(b)) return *x < 0 ? -1 : sign(static_cast<std::uint64_t>(*x), *y);
    return sign(static_cast<long double>(*x), static_cast<long double>(std::get<double>(b.v)));
  }
  if (const auto* x = as<std::uint64_t>(a)) {
    if (const auto* y = as<std::uint64_t>(b)) return sign(*x, *y);
    if (const auto* y = as<std::int64_t>(b)) return *y < 0 ? 1 : sign(*x, static_cast<std::uint64_t>(*y));
    return sign(static_cast<long double>(*x), static_cast<long double>(std::get<double>(b.v)));
  }
  const double x = std::get<double>(a.v);
  if (const auto* y = as<std::int64_t>(b))
    return sign(static_cast<long double>(x), static_cast<long double>(*y));
  if (const auto* y = as<std::uint64_t>(b))
    return sign(static_cast<long double>(x), static_cast<long double>(*y));
  return sign(x, std::get<double>(b.v));
}

bool is_nan(const Value& v) {
  const auto* d = as<double>(v);
  return d != nullptr && std::isnan(*d);
}

// types.Equal: heterogeneous, false across types, except that Kubernetes' Quantity and Semver answer
// "no such overload" when the other side is not of their type.
Outcome values_equal(const Value& a, const Value& b) {
  if (a.v.index() >= 1 && a.v.index() <= 3) {
    if (is_nan(a) || is_nan(b)) return of(false);
    auto c = compare_numbers(a, b);
    return of(c.has_value() && *c == 0);
  }
  if (const auto* x = as<bool>(a)) return of(as<bool>(b) != nullptr && *x == std::get<bool>(b.v));
  if (const auto* x = as<std::string>(a))
    return of(as<std::string>(b) != nullptr && *x == std::get<std::string>(b.v));
  if (const auto* x = as<k8s::Quantity>(a)) {
    if (const auto* y = as<k8s::Quantity>(b)) return of(*x == *y);
    return no_overload();
  }
  if (const auto* x = as<Semver>(a)) {
    if (const auto* y = as<Semver>(b)) return of(compare(*x, *y) == 0);
    return no_overload();
  }
  if (const auto* x = as<std::shared_ptr<const ValueList>>(a)) {
    const auto* y = as<std::shared_ptr<const ValueList>>(b);
    if (y == nullptr || (*x)->size() != (*y)->size()) return of(false);
    std::optional<Outcome> failure;
    for (std::size_t i = 0; i < (*x)->size(); ++i) {
      Outcome e = values_equal((**x)[i], (**y)[i]);
      if (e.ok() && !std::get<bool>(e.value.v)) return of(false);
      if (!e.ok() && !failure) failure = std::move(e);
    }
    return failure ? *std::move(failure) : of(true);
  }
  return not_evaluated("not evaluated: equality of maps");
}

class Evaluator {
 public:
  Evaluator(const DeviceData& device, int locals, std::int64_t limit)
      : device_(device), locals_(static_cast<std::size_t>(locals)), budget_(limit) {}

  std::int64_t steps() const { return budget_.steps(); }

  Outcome eval(const Node& n) {
    if (!charge(1)) return budget_exceeded();
    switch (n.kind) {
      case NodeKind::kLiteral:
        return of(n.literal);
      case NodeKind::kIdent:
        return of(DeviceRef{});
      case NodeKind::kLocal:
        return locals_[static_cast<std::size_t>(n.slot)];
      case NodeKind::kBind: {
        locals_[static_cast<std::size_t>(n.slot)] = eval(*n.children[0]);
        return eval(*n.children[1]);
      }
      case NodeKind::kSelect:
      case NodeKind::kIndex:
      case NodeKind::kHas:
      case NodeKind::kList:
        return access(n);
      case NodeKind::kAnd:
      case NodeKind::kOr:
        return logical(n, n.kind == NodeKind::kOr);
      case NodeKind::kNot:
      case NodeKind::kNegate:
      case NodeKind::kConditional:
        return unary(n);
      case NodeKind::kCall:
        return name_overload(n, call(n), call_types_);
      default:
        return relation(n);
    }
  }

 private:
  bool charge(std::int64_t steps) { return budget_.charge(steps); }

  // Member selection, indexing, has() and list literals.
  Outcome access(const Node& n) {
    switch (n.kind) {
      case NodeKind::kSelect: {
        Outcome target = eval(*n.children[0]);
        if (!target.ok()) return target;
        return select(target.value, n.name);
      }
      case NodeKind::kIndex: {
        Outcome target = eval(*n.children[0]);
        if (!target.ok()) return target;
        Outcome index = eval(*n.children[1]);
        if (!index.ok()) return index;
        return lookup(target.value, index.value);
      }
      case NodeKind::kHas: {
        Outcome target = eval(*n.children[0]);
        if (!target.ok()) return target;
        if (const auto* map = as<MapRef>(target.value)) {
          return of(map->finds_everything || map->map->find(n.name) != map->map->end());
        }
        return not_evaluated("not evaluated: has() on a " + type_name(target.value));
      }
      default:
        break;
    }
    auto list = std::make_shared<ValueList>();  // kList
    for (const auto& c : n.children) {
      Outcome e = eval(*c);
      if (!e.ok()) return e;
      list->push_back(std::move(e.value));
    }
    return of(std::shared_ptr<const ValueList>(std::move(list)));
  }

  // `!`, unary minus and `?:`.
  Outcome unary(const Node& n) {
    switch (n.kind) {
      case NodeKind::kNot: {
        Outcome e = eval(*n.children[0]);
        if (!e.ok()) return e;
        if (const auto* b = as<bool>(e.value)) return of(!*b);
        return no_overload();
      }
      case NodeKind::kNegate: {
        Outcome e = eval(*n.children[0]);
        if (!e.ok()) return e;
        if (const auto* i = as<std::int64_t>(e.value)) {
          if (*i == std::numeric_limits<std::int64_t>::min()) return error("integer overflow");
          return of(-*i);
        }
        if (const auto* d = as<double>(e.value)) return of(-*d);
        return no_overload();
      }
      default:
        break;
    }
    Outcome c = eval(*n.children[0]);  // kConditional
    if (!c.ok()) return c;
    const auto* b = as<bool>(c.value);
    if (b == nullptr) return no_overload();
    return eval(*n.children[*b ? 1 : 2]);
  }

  // cel-go's evalOr/evalAnd: a decisive term wins wherever it is; otherwise unknown (here: not evaluated)
  // before the first error, and a non-bool term is "no such overload".
  Outcome logical(const Node& n, bool is_or) {
    std::optional<Outcome> unknown;
    std::optional<Outcome> failure;
    for (const auto& term : n.children) {
      Outcome e = eval(*term);
      if (e.ok()) {
        if (const auto* b = as<bool>(e.value)) {
          if (*b == is_or) return of(is_or);
          continue;
        }
        e = no_overload();
      }
      if (e.state == Outcome::State::kNotEvaluated) {
        if (!unknown) unknown = std::move(e);
      } else if (!failure) {
        failure = std::move(e);
      }
    }
    if (unknown) return *std::move(unknown);
    if (failure) return *std::move(failure);
    return of(!is_or);
  }

  Outcome relation(const Node& n) {
    // cel-go plans `x in [literals]` as a constant set: an empty one is false without evaluating x.
    if (n.kind == NodeKind::kIn && n.children[1]->kind == NodeKind::kList &&
        n.children[1]->children.empty()) {
      return of(false);
    }
    Outcome left = eval(*n.children[0]);
    Outcome right = eval(*n.children[1]);
    if (!left.ok()) return left;
    if (!right.ok()) return right;
    const Value& a = left.value;
    const Value& b = right.value;
    switch (n.kind) {
      case NodeKind::kEquals:
        return values_equal(a, b);
      case NodeKind::kNotEquals: {
        Outcome e = values_equal(a, b);
        if (e.state == Outcome::State::kNotEvaluated) return e;
        // evalNe: Bool(Equal(l, r) != True), so an error compares as "not equal".
        return of(!(e.ok() && std::get<bool>(e.value.v)));
      }
      case NodeKind::kIn:
        return contains(b, a);
      default:
        break;
    }
    std::optional<int> c = compare_numbers(a, b);
    if (!c) {
      if (const auto* x = as<std::string>(a); x != nullptr && as<std::string>(b) != nullptr) {
        if (!charge(static_cast<std::int64_t>(std::min(x->size(), std::get<std::string>(b.v).size()) / 16))) {
          return budget_exceeded();
        }
        const int r = x->compare(std::get<std::string>(b.v));
        c = r < 0 ? -1 : (r > 0 ? 1 : 0);
      } else if (const auto* y = as<bool>(a); y != nullptr && as<bool>(b) != nullptr) {
        c = static_cast<int>(*y) - static_cast<int>(std::get<bool>(b.v));
      } else if (a.v.index() <= 4) {
        return no_overload();  // the left side orders (traits.Comparer) but not against the right
      } else {
        // The left side has no ordering at all: the dispatcher names the operator.
        static constexpr std::array<std::string_view, 4> kNames{"_<_", "_<=_", "_>_", "_>=_"};
        return error(
            "no such overload: " +
            std::string(
                kNames[static_cast<std::size_t>(n.kind) - static_cast<std::size_t>(NodeKind::kLess)]));
      }
    } else if (is_nan(a) || is_nan(b)) {
      return of(false);
    }
    switch (n.kind) {
      case NodeKind::kLess:
        return of(*c < 0);
      case NodeKind::kLessEqual:
        return of(*c <= 0);
      case NodeKind::kGreater:
        return of(*c > 0);
      default:
        return of(*c >= 0);
    }
  }

  Outcome contains(const Value& container, const Value& element) {
    if (const auto* list = as<std::shared_ptr<const ValueList>>(container)) {
      // cel-go turns `x in [constant list]` into a hash-set lookup, which fails on Kubernetes' Quantity and
      // Semver ("hash of unhashable type cel.Semver"); we do not reproduce which lists it optimizes.
      if (as<k8s::Quantity>(element) != nullptr || as<Semver>(element) != nullptr) {
        return not_evaluated("not evaluated: a " + type_name(element) + " tested for list membership");
      }
      for (const auto& item : **list) {
        if (!charge(1)) return budget_exceeded();
        Outcome e = values_equal(element, item);
        if (e.state == Outcome::State::kNotEvaluated) return e;
        if (e.ok() && std::get<bool>(e.value.v)) return of(true);
      }
      return of(false);
    }
    if (const auto* map = as<MapRef>(container)) {
      const auto* key = as<std::string>(element);
      return of(key != nullptr && map->map->find(*key) != map->map->end());
    }
    return no_overload();
  }

  Outcome select(const Value& target, const std::string& field) {
    if (as<DeviceRef>(target) != nullptr) {
      if (field == "driver") return of(device_.driver);
      if (field == "allowMultipleAllocations") return of(device_.allow_multiple_allocations);
      if (field == "attributes") return of(MapRef{&device_.attributes_by_domain, true});
      return of(MapRef{&device_.capacity_by_domain, true});  // the checker allows nothing else
    }
    return lookup(target, Value{field});
  }

  // refQualify: a map finds the key or reports "no such key"; a list takes an index; anything else has no
  // keys at all.
  Outcome lookup(const Value& target, const Value& key) {
    if (const auto* map = as<MapRef>(target)) {
      const auto* name = as<std::string>(key);
      if (name == nullptr) return not_evaluated("not evaluated: a map indexed by a " + type_name(key));
      if (auto it = map->map->find(*name); it != map->map->end()) return of(it->second);
      if (map->finds_everything) return of(MapRef{&kEmptyMap, false});
      return error("no such key: " + *name);
    }
    if (const auto* list = as<std::shared_ptr<const ValueList>>(target)) {
      std::int64_t i = 0;
      if (const auto* x = as<std::int64_t>(key)) {
        i = *x;
      } else if (const auto* u = as<std::uint64_t>(key); u != nullptr && *u <= 1'000'000) {
        i = static_cast<std::int64_t>(*u);
      } else {
        return not_evaluated("not evaluated: a list indexed by a " + type_name(key));
      }
      if (i < 0 || i >= static_cast<std::int64_t>((*list)->size()))
        return error("index out of bounds: " + std::to_string(i));
      return of((**list)[static_cast<std::size_t>(i)]);
    }
    // refQualify's last case: no keys at all, reported with the key as Go's %v prints it.
    if (const auto* name = as<std::string>(key)) return error("no such key: " + *name);
    if (const auto* i = as<std::int64_t>(key)) return error("no such key: " + std::to_string(*i));
    if (const auto* u = as<std::uint64_t>(key)) return error("no such key: " + std::to_string(*u));
    return not_evaluated("not evaluated: indexing a " + type_name(target));
  }

  Outcome call(const Node& n) {
    std::vector<Value> args;
    args.reserve(n.children.size());
    for (const auto& c : n.children) {
      Outcome e = eval(*c);
      if (!e.ok()) return e;
      args.push_back(std::move(e.value));
    }
    call_types_.clear();
    for (const auto& a : args) call_types_ += (call_types_.empty() ? "" : ", ") + type_name(a);
    return call_function(n, args, budget_);
  }

  const DeviceData& device_;
  std::vector<Outcome> locals_;
  StepBudget budget_;
  std::string call_types_;  // the argument types of the last call, for name_overload
};

}  // namespace

Evaluation run(const Program& program, const DeviceData& device, std::int64_t limit) {
  Evaluator evaluator(device, program.locals, limit);
  Outcome result;
  try {
    result = evaluator.eval(*program.root);
  } catch (const std::exception& e) {  // std::bad_alloc: never let a selector take the webhook down
    return {
        Evaluation::State::kNotEvaluated, {}, std::string("not evaluated: ") + e.what(), evaluator.steps()};
  }
  return {result.state, std::move(result.value), std::move(result.message), evaluator.steps()};
}

}  // namespace cel
}  // namespace gpuadmit::policy
