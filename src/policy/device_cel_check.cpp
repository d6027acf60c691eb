// Device selectors: the checker. Resolves identifiers (`device`, cel.bind variables), gives each node the
// static type cel-go's checker would (attributes are dyn, capacity values Quantity, device.driver string),
// reports what cel-go would reject at compile time, marks functions outside the subset, and translates
// literal regular expressions once.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "device_cel_ast.hpp"
#include "device_cel_lex.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy::cel {

namespace {

bool is_map(Type t) {
  return t == Type::kAttributesByDomain || t == Type::kAttributes || t == Type::kCapacityByDomain ||
         t == Type::kCapacity;
}
bool is_number(Type t) {
  return t == Type::kInt || t == Type::kUint || t == Type::kDouble;
}

[[noreturn]] void compile_error(const std::string& what) {
  throw CompileStop{false, "compilation failed: ERROR: " + what};
}

[[noreturn]] void no_matching_overload(std::string_view function, std::vector<Type> args) {
  std::string list;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i != 0) list += ", ";
    list += type_name(args[i]);
  }
  compile_error("found no matching overload for '" + std::string(function) + "' applied to '(" + list + ")'");
}

// One overload family of the subset: receiver (kDyn when global) and argument types, result type.
struct Signature {
  std::string_view name;
  bool receiver;
  Type target;  // kDyn for a global function; kQuantity stands for "Quantity or Semver" when either = true
  std::array<Type, 2> args;
  int arity;
  Type result;
  bool either = false;
};

constexpr std::array<Signature, 22> kSignatures{{
    {"size", false, Type::kDyn, {Type::kDyn, Type::kDyn}, 1, Type::kInt},
    {"size", true, Type::kDyn, {Type::kDyn, Type::kDyn}, 0, Type::kInt},
    {"startsWith", true, Type::kString, {Type::kString, Type::kDyn}, 1, Type::kBool},
    {"endsWith", true, Type::kString, {Type::kString, Type::kDyn}, 1, Type::kBool},
    {"contains", true, Type::kString, {Type::kString, Type::kDyn}, 1, Type::kBool},
    {"matches", true, Type::kString, {Type::kString, Type::kDyn}, 1, Type::kBool},
    {"matches", false, Type::kDyn, {Type::kString, Type::kString}, 2, Type::kBool},
    {"lowerAscii", true, Type::kString, {Type::kDyn, Type::kDyn}, 0, Type::kString},
    {"upperAscii", true, Type::kString, {Type::kDyn, Type::kDyn}, 0, Type::kString},
    {"quantity", false, Type::kDyn, {Type::kString, Type::kDyn}, 1, Type::kQuantity},
    {"isQuantity", false, Type::kDyn, {Type::kString, Type::kDyn}, 1, Type::kBool},
    {"semver", false, Type::kDyn, {Type::kString, Type::kBool}, 1, Type::kSemver},
    {"isSemver", false, Type::kDyn, {Type::kString, Type::kBool}, 1, Type::kBool},
    {"compareTo", true, Type::kQuantity, {Type::kDyn, Type::kDyn}, 1, Type::kInt, true},
    {"isGreaterThan", true, Type::kQuantity, {Type::kDyn, Type::kDyn}, 1, Type::kBool, true},
    {"isLessThan", true, Type::kQuantity, {Type::kDyn, Type::kDyn}, 1, Type::kBool, true},
    {"sign", false, Type::kDyn, {Type::kQuantity, Type::kDyn}, 1, Type::kInt},
    {"asInteger", true, Type::kQuantity, {Type::kDyn, Type::kDyn}, 0, Type::kInt},
    {"isInteger", true, Type::kQuantity, {Type::kDyn, Type::kDyn}, 0, Type::kBool},
    {"major", true, Type::kSemver, {Type::kDyn, Type::kDyn}, 0, Type::kInt},
    {"minor", true, Type::kSemver, {Type::kDyn, Type::kDyn}, 0, Type::kInt},
    {"patch", true, Type::kSemver, {Type::kDyn, Type::kDyn}, 0, Type::kInt},
}};

// A literal's full type, as cel-go names it: "list(list(string))". Only list literals nest here.
std::string full_type(const Node& n) {
  if (n.kind != NodeKind::kList) return std::string(type_name(n.type));
  return "list(" + (n.children.empty() ? std::string("dyn") : full_type(*n.children[0])) + ")";
}

// Whether two full types unify as cel-go's checker has them do: dyn (an attribute's `any` included) fits
// anything at its own level, lists compare their elements, maps fit each other.
bool assignable(std::string_view x, std::string_view y) {
  const auto is_list = [](std::string_view t) { return t.substr(0, 5) == "list("; };
  if (x == "any" || x == "dyn" || y == "any" || y == "dyn") return true;
  if (is_list(x) && is_list(y)) return assignable(x.substr(5, x.size() - 6), y.substr(5, y.size() - 6));
  if (x.substr(0, 4) == "map(" && y.substr(0, 4) == "map(") return true;
  return x == y;
}

bool fits(Type expected, Type actual) {
  return expected == Type::kDyn || actual == Type::kDyn || expected == actual;
}

Type literal_type(const Value& v) {
  switch (v.v.index()) {
    case 0:
      return Type::kBool;
    case 1:
      return Type::kInt;
    case 2:
      return Type::kUint;
    case 3:
      return Type::kDouble;
    case 4:
      return Type::kString;
    default:
      return Type::kDyn;
  }
}

class Checker {
 public:
  int locals = 0;

  void check(Node& n) {
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      if (n.kind == NodeKind::kBind && i == 1) {
        n.slot = locals++;
        scope_.push_back({n.name, n.slot, n.children[0]->type});
        check(*n.children[1]);
        scope_.pop_back();
      } else {
        check(*n.children[i]);
      }
    }
    n.type = type_of(n);
  }

 private:
  struct Local {
    std::string name;
    int slot;
    Type type;
  };

  Type child(const Node& n, std::size_t i) const { return n.children[i]->type; }

  Type type_of(Node& n) {
    switch (n.kind) {
      case NodeKind::kLiteral:
        return literal_type(n.literal);
      case NodeKind::kIdent:
        return ident_type(n);
      case NodeKind::kLocal:
        return Type::kDyn;
      case NodeKind::kSelect:
        return member_type(child(n, 0), n.name, true);
      case NodeKind::kIndex:
        return index_type(n);
      case NodeKind::kHas:
        return has_type(n);
      case NodeKind::kBind:
        return child(n, 1);
      case NodeKind::kCall:
        return call_type(n);
      case NodeKind::kList:
        return list_type(n);
      case NodeKind::kAnd:
      case NodeKind::kOr:
        for (const auto& c : n.children) {
          if (!fits(Type::kBool, c->type)) {
            no_matching_overload(n.kind == NodeKind::kAnd ? "_&&_" : "_||_", {n.children[0]->type, c->type});
          }
        }
        return Type::kBool;
      case NodeKind::kNot:
        if (!fits(Type::kBool, child(n, 0))) no_matching_overload("!_", {child(n, 0)});
        return Type::kBool;
      case NodeKind::kNegate:
        if (child(n, 0) != Type::kDyn && child(n, 0) != Type::kInt && child(n, 0) != Type::kDouble) {
          no_matching_overload("-_", {child(n, 0)});
        }
        return child(n, 0);
      case NodeKind::kConditional:
        if (!fits(Type::kBool, child(n, 0)) ||
            (child(n, 1) != Type::kDyn && child(n, 2) != Type::kDyn && child(n, 1) != child(n, 2))) {
          no_matching_overload("_?_:_", {child(n, 0), child(n, 1), child(n, 2)});
        }
        return child(n, 1) == child(n, 2) ? child(n, 1) : Type::kDyn;
      case NodeKind::kEquals:
      case NodeKind::kNotEquals:
        return equality_type(n);
      case NodeKind::kLess:
      case NodeKind::kLessEqual:
      case NodeKind::kGreater:
      case NodeKind::kGreaterEqual:
        return order_type(n);
      case NodeKind::kIn:
        return in_type(n);
    }
    return Type::kDyn;
  }

  // An identifier: a cel.bind variable or `device`.
  Type ident_type(Node& n) {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
      if (it->name == n.name) {
        n.kind = NodeKind::kLocal;
        n.slot = it->slot;
        return it->type;
      }
    }
    if (n.name == "device") return Type::kDevice;
    unsupported("undeclared reference to '" + n.name + "'");
  }

  // `has(x.f)`: on a map (device's own fields are outside the subset).
  Type has_type(const Node& n) const {
    const Type target = child(n, 0);
    if (target == Type::kDevice) unsupported("has() on a field of device");
    if (target != Type::kDyn && !is_map(target)) {
      compile_error("type '" + std::string(type_name(target)) + "' does not support field selection");
    }
    return Type::kBool;
  }

  // `x[i]`: lists take an int or uint, maps a string.
  Type index_type(const Node& n) const {
    const Type target = child(n, 0);
    const Type index = child(n, 1);
    if (target == Type::kList) {
      if (!fits(Type::kInt, index) && index != Type::kUint) no_matching_overload("_[_]", {target, index});
      return Type::kDyn;
    }
    if (is_map(target) && !fits(Type::kString, index)) no_matching_overload("_[_]", {target, index});
    if (target != Type::kDyn && !is_map(target)) no_matching_overload("_[_]", {target, index});
    return member_type(target, "", false);
  }

  // HomogeneousAggregateLiterals: every element of a literal has the first one's type, dyn included.
  Type list_type(Node& n) {
    if (!n.children.empty()) n.element = n.children[0]->type;
    for (const auto& c : n.children) {
      const bool empty_list = c->kind == NodeKind::kList && c->children.empty();
      const bool same =
          c->type == Type::kList && n.element == Type::kList
              ? empty_list || n.children[0]->children.empty() || full_type(*c) == full_type(*n.children[0])
              : c->type == n.element || (is_map(c->type) && is_map(n.element));
      if (!same) {
        compile_error("expected type '" + full_type(*n.children[0]) + "' but found '" + full_type(*c) + "'");
      }
    }
    return Type::kList;
  }

  // `==` and `!=`.
  Type equality_type(const Node& n) const {
    const Type a = child(n, 0);
    const Type b = child(n, 1);
    const Node& l = *n.children[0];
    const Node& r = *n.children[1];
    // Element types must agree too, level by level (tests/differential/dracel).
    const bool lists_differ = a == Type::kList && b == Type::kList && !assignable(full_type(l), full_type(r));
    if ((a != Type::kDyn && b != Type::kDyn && a != b && !(is_map(a) && is_map(b))) || lists_differ) {
      no_matching_overload(n.kind == NodeKind::kEquals ? "_==_" : "_!=_", {a, b});
    }
    return Type::kBool;
  }

  // `< <= > >=`.
  Type order_type(const Node& n) const {
    const Type a = child(n, 0);
    const Type b = child(n, 1);
    const auto orders = [](Type t) {
      return t == Type::kDyn || is_number(t) || t == Type::kString || t == Type::kBool;
    };
    const bool orderable = orders(a) && orders(b);
    const bool compatible = a == Type::kDyn || b == Type::kDyn || a == b || (is_number(a) && is_number(b));
    if (!orderable || !compatible) {
      static constexpr std::array<std::string_view, 4> kNames{"_<_", "_<=_", "_>_", "_>=_"};
      no_matching_overload(kNames[static_cast<int>(n.kind) - static_cast<int>(NodeKind::kLess)], {a, b});
    }
    return Type::kBool;
  }

  // `in`: a list or a map.
  Type in_type(const Node& n) const {
    const Type a = child(n, 0);
    const Type b = child(n, 1);
    if (b != Type::kDyn && b != Type::kList && !is_map(b)) no_matching_overload("@in", {a, b});
    const Type element = n.children[1]->element;  // known for a list literal only
    if (b == Type::kList && a != Type::kDyn && element != Type::kDyn && a != element)
      no_matching_overload("@in", {a, b});
    const Node& list = *n.children[1];
    if (list.kind == NodeKind::kList && !list.children.empty() &&
        !assignable(full_type(*n.children[0]), full_type(*list.children[0]))) {
      no_matching_overload("@in", {a, b});
    }
    if (is_map(b) && !fits(Type::kString, a)) no_matching_overload("@in", {a, b});
    return Type::kBool;
  }

  static Type member_type(Type target, const std::string& field, bool selection) {
    switch (target) {
      case Type::kDevice:
        if (!selection) compile_error("type 'kubernetes.DRADevice' does not support indexing");
        if (field == "driver") return Type::kString;
        if (field == "attributes") return Type::kAttributesByDomain;
        if (field == "capacity") return Type::kCapacityByDomain;
        if (field == "allowMultipleAllocations") return Type::kBool;
        compile_error("undefined field '" + field + "'");
      case Type::kAttributesByDomain:
        return Type::kAttributes;
      case Type::kCapacityByDomain:
        return Type::kCapacity;
      case Type::kCapacity:
        return Type::kQuantity;
      case Type::kAttributes:
      case Type::kDyn:
        return Type::kDyn;
      default:
        compile_error("type '" + std::string(type_name(target)) + "' does not support field selection");
    }
  }

  Type call_type(Node& n) {
    const int arity = static_cast<int>(n.children.size()) - (n.has_target ? 1 : 0);
    const Signature* found = nullptr;
    bool name_known = false;
    for (const auto& s : kSignatures) {
      if (s.name != n.name) continue;
      name_known = true;
      if (s.receiver == n.has_target && (s.arity == arity || (s.args[1] == Type::kBool && arity == 2)))
        found = &s;
    }
    if (!name_known) unsupported("function '" + n.name + "'");
    if (found == nullptr)
      unsupported("function '" + n.name + "' with " + std::to_string(arity) + " arguments");
    std::vector<Type> actual;
    for (const auto& c : n.children) actual.push_back(c->type);
    const std::size_t first_arg = n.has_target ? 1 : 0;
    bool ok = true;
    if (n.has_target) {
      const Type t = actual[0];
      if (found->either) {
        const Type a = actual[1];
        ok = (t == Type::kDyn || t == Type::kQuantity || t == Type::kSemver) &&
             (a == Type::kDyn || a == Type::kQuantity || a == Type::kSemver) &&
             (t == Type::kDyn || a == Type::kDyn || a == t);
      } else if (n.name == "size") {
        ok = t == Type::kDyn || t == Type::kString || t == Type::kList || is_map(t);
      } else {
        ok = fits(found->target, t);
      }
    }
    for (std::size_t i = first_arg; i < actual.size() && ok; ++i) {
      const Type expected = n.name == "size" ? Type::kDyn : found->args[i - first_arg];
      ok = fits(expected, actual[i]);
      if (n.name == "size" && !n.has_target) {
        ok = actual[i] == Type::kDyn || actual[i] == Type::kString || actual[i] == Type::kList ||
             is_map(actual[i]);
      }
    }
    if (!ok) no_matching_overload(n.name, actual);
    if (n.name == "matches") {
      const Node& pattern = *n.children.back();
      if (pattern.kind == NodeKind::kLiteral && pattern.literal.v.index() == 4) {
        auto translated = translate_re2(std::get<std::string>(pattern.literal.v));
        // cel-go validates literal patterns when it compiles (ValidateRegexLiterals): one we cannot
        // translate may be a compile error there, or valid RE2, so the whole selector is not evaluated.
        if (auto* regex = std::get_if<std::shared_ptr<const Regex>>(&translated)) {
          n.regex = *regex;
        } else {
          throw CompileStop{true, std::get<std::string>(translated)};
        }
      }
    }
    return found->result;
  }

  std::vector<Local> scope_;
};

}  // namespace

std::variant<Program, CompileStop> compile_program(std::string_view expression) {
  try {
    Program program;
    program.root = parse_expression(expression);
    Checker checker;
    checker.check(*program.root);
    program.locals = checker.locals;
    const Type out = program.root->type;
    if (out != Type::kBool && out != Type::kDyn) {
      return CompileStop{false,
                         "must evaluate to bool or the unknown type, not " + std::string(type_name(out))};
    }
    return program;
  } catch (CompileStop& stop) {
    return std::move(stop);
  } catch (const std::exception& e) {  // std::bad_alloc, std::regex_error escaping the translator
    return CompileStop{true, std::string("not evaluated: ") + e.what()};
  }
}

}  // namespace gpuadmit::policy::cel
