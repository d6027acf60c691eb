// Device selectors: the parser (CEL's grammar, github.com/google/cel-go/parser/gen/CEL.g4, over the tokens of
// device_cel_lex.cpp), with the macros Kubernetes enables that the subset evaluates (has, cel.bind). A
// construct of the full grammar that the subset leaves out stops the parse as "unsupported", never as a
// syntax error, so that valid CEL is never reported as broken. The checker that follows is
// device_cel_check.cpp.
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_cel_ast.hpp"
#include "device_cel_lex.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy::cel {

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens) : text_(text), tokens_(std::move(tokens)) {}

  std::unique_ptr<Node> parse() {
    auto root = expr();
    if (peek().kind != Tok::kEnd) fail_here("extraneous input '" + describe(peek()) + "'");
    return root;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  bool is(std::string_view punct) const { return peek().kind == Tok::kPunct && peek().text == punct; }
  bool accept(std::string_view punct) {
    if (!is(punct)) return false;
    ++pos_;
    return true;
  }
  void expect(std::string_view punct) {
    if (!accept(punct)) fail_here("missing '" + std::string(punct) + "' at '" + describe(peek()) + "'");
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd:
        return "<EOF>";
      case Tok::kString:
        return "\"" + t.text + "\"";
      case Tok::kInt:
      case Tok::kUint:
        return std::to_string(t.magnitude);
      case Tok::kDouble:
        return std::to_string(t.real);
      default:
        return t.text;
    }
  }
  [[noreturn]] void fail_here(const std::string& what) const { syntax_error(text_, peek().offset, what); }

  std::unique_ptr<Node> make(NodeKind kind, std::size_t offset,
                             std::vector<std::unique_ptr<Node>> children = {}) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->offset = offset;
    for (const auto& c : children) n->depth = std::max(n->depth, c->depth + 1);
    n->children = std::move(children);
    if (n->depth > kMaxSelectorDepth) {
      unsupported("nested deeper than " + std::to_string(kMaxSelectorDepth) + " levels");
    }
    return n;
  }
  template <typename... Children>
  std::vector<std::unique_ptr<Node>> list(Children&&... c) {
    std::vector<std::unique_ptr<Node>> out;
    (out.push_back(std::forward<Children>(c)), ...);
    return out;
  }

  // Guards the parser's own recursion, which can go deeper than the tree (`((((x))))`).
  struct Descent {
    explicit Descent(int& d) : depth(d) {
      if (++depth > kMaxSelectorDepth)
        unsupported("nested deeper than " + std::to_string(kMaxSelectorDepth) + " levels");
    }
    ~Descent() { --depth; }
    Descent(const Descent&) = delete;
    Descent& operator=(const Descent&) = delete;
    int& depth;
  };

  std::unique_ptr<Node> expr() {
    Descent d(descent_);
    const std::size_t at = peek().offset;
    auto cond = logical(NodeKind::kOr);
    if (!accept("?")) return cond;
    auto yes = logical(NodeKind::kOr);
    expect(":");
    auto no = expr();
    return make(NodeKind::kConditional, at, list(std::move(cond), std::move(yes), std::move(no)));
  }

  // `a || b || c` and `a && b && c` are one n-ary node each, as cel-go plans them.
  std::unique_ptr<Node> logical(NodeKind kind) {
    const std::size_t at = peek().offset;
    const std::string_view op = kind == NodeKind::kOr ? "||" : "&&";
    auto first = kind == NodeKind::kOr ? logical(NodeKind::kAnd) : relation();
    if (!is(op)) return first;
    std::vector<std::unique_ptr<Node>> terms;
    terms.push_back(std::move(first));
    while (accept(op)) terms.push_back(kind == NodeKind::kOr ? logical(NodeKind::kAnd) : relation());
    return make(kind, at, std::move(terms));
  }

  std::unique_ptr<Node> relation() {
    auto left = addition();
    while (true) {
      const Token& t = peek();
      NodeKind kind;
      if (t.kind == Tok::kIdent && t.text == "in") {
        kind = NodeKind::kIn;
      } else if (t.kind != Tok::kPunct) {
        return left;
      } else if (t.text == "==") {
        kind = NodeKind::kEquals;
      } else if (t.text == "!=") {
        kind = NodeKind::kNotEquals;
      } else if (t.text == "<") {
        kind = NodeKind::kLess;
      } else if (t.text == "<=") {
        kind = NodeKind::kLessEqual;
      } else if (t.text == ">") {
        kind = NodeKind::kGreater;
      } else if (t.text == ">=") {
        kind = NodeKind::kGreaterEqual;
      } else {
        return left;
      }
      const std::size_t at = t.offset;
      ++pos_;
      auto right = addition();
      left = make(kind, at, list(std::move(left), std::move(right)));
    }
  }

  std::unique_ptr<Node> addition() {
    auto left = unary();
    if (is("+") || is("-") || is("*") || is("/") || is("%"))
      unsupported("arithmetic ('" + peek().text + "')");
    return left;
  }

  std::unique_ptr<Node> unary() {
    Descent d(descent_);
    const std::size_t at = peek().offset;
    if (accept("!")) return make(NodeKind::kNot, at, list(unary()));
    if (accept("-")) {
      // A minus before a number literal is part of the literal, so the smallest int64 can be written.
      if (peek().kind == Tok::kInt || peek().kind == Tok::kDouble) {
        const Token t = peek();
        ++pos_;
        auto literal = make(NodeKind::kLiteral, at);
        if (t.kind == Tok::kDouble) {
          literal->literal.v = -t.real;
        } else {
          literal->literal.v = static_cast<std::int64_t>(0 - t.magnitude);
        }
        return member(std::move(literal));
      }
      return make(NodeKind::kNegate, at, list(unary()));
    }
    return member(primary());
  }

  std::vector<std::unique_ptr<Node>> arguments(std::string_view close) {
    std::vector<std::unique_ptr<Node>> args;
    if (accept(close)) return args;
    do {
      if (is(close)) break;  // trailing comma
      args.push_back(expr());
    } while (accept(","));
    expect(close);
    return args;
  }

  std::unique_ptr<Node> member(std::unique_ptr<Node> target) {
    while (true) {
      const std::size_t at = peek().offset;
      if (is("[?")) unsupported("optional index");
      if (accept(".")) {
        if (is("?")) unsupported("optional field selection");
        if (peek().kind != Tok::kIdent)
          fail_here("no viable alternative at input '." + describe(peek()) + "'");
        std::string name = peek().text;
        ++pos_;
        if (accept("(")) {
          auto args = arguments(")");
          target = call(at, std::move(name), std::move(target), std::move(args));
        } else if (is("{")) {
          unsupported("message construction");
        } else {
          auto n = make(NodeKind::kSelect, at, list(std::move(target)));
          n->name = std::move(name);
          target = std::move(n);
        }
      } else if (accept("[")) {
        auto index = expr();
        expect("]");
        target = make(NodeKind::kIndex, at, list(std::move(target), std::move(index)));
      } else {
        return target;
      }
    }
  }

  std::unique_ptr<Node> call(std::size_t at, std::string name, std::unique_ptr<Node> target,
                             std::vector<std::unique_ptr<Node>> args) {
    static constexpr std::array<std::string_view, 9> kMacros{"all",           "exists",       "exists_one",
                                                             "existsOne",     "map",          "filter",
                                                             "transformList", "transformMap", "sortBy"};
    if (target) {
      if (target->kind == NodeKind::kIdent && target->name == "cel" && name == "bind") {
        if (args.size() != 3 || args[0]->kind != NodeKind::kIdent) {
          syntax_error(text_, at, "cel.bind() variable name must be a simple identifier");
        }
        auto n = make(NodeKind::kBind, at, list(std::move(args[1]), std::move(args[2])));
        n->name = args[0]->name;
        return n;
      }
      for (auto m : kMacros) {
        if (name == m && !args.empty() && args[0]->kind == NodeKind::kIdent)
          unsupported("macro '" + name + "'");
      }
    } else if (name == "has") {
      if (args.size() != 1 || args[0]->kind != NodeKind::kSelect) {
        syntax_error(text_, at, "invalid argument to has() macro");
      }
      auto n = make(NodeKind::kHas, at, std::move(args[0]->children));
      n->name = std::move(args[0]->name);
      return n;
    }
    std::vector<std::unique_ptr<Node>> children;
    const bool has_target = target != nullptr;
    if (target) children.push_back(std::move(target));
    for (auto& a : args) children.push_back(std::move(a));
    auto n = make(NodeKind::kCall, at, std::move(children));
    n->name = std::move(name);
    n->has_target = has_target;
    return n;
  }

  // A number or string literal token, already consumed.
  std::unique_ptr<Node> literal(const Token& t) {
    if (t.kind == Tok::kInt &&
        t.magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      syntax_error(text_, t.offset, "invalid int literal");
    }
    auto n = make(NodeKind::kLiteral, t.offset);
    switch (t.kind) {
      case Tok::kInt:
        n->literal.v = static_cast<std::int64_t>(t.magnitude);
        break;
      case Tok::kUint:
        n->literal.v = t.magnitude;
        break;
      case Tok::kDouble:
        n->literal.v = t.real;
        break;
      default:
        n->literal.v = t.text;  // kString
        break;
    }
    return n;
  }

  std::unique_ptr<Node> primary() {
    Descent d(descent_);
    const Token t = peek();
    const std::size_t at = t.offset;
    switch (t.kind) {
      case Tok::kEnd:
        fail_here("mismatched input '<EOF>' expecting an expression");
      case Tok::kInt:
      case Tok::kUint:
      case Tok::kDouble:
      case Tok::kString:
        ++pos_;
        return literal(t);
      case Tok::kIdent: {
        ++pos_;
        if (t.text == "true" || t.text == "false") {
          auto n = make(NodeKind::kLiteral, at);
          n->literal.v = t.text == "true";
          return n;
        }
        if (t.text == "null") unsupported("null");
        if (t.text == "in") syntax_error(text_, at, "extraneous input 'in'");
        if (accept("(")) {
          auto args = arguments(")");
          return call(at, t.text, nullptr, std::move(args));
        }
        if (is("{")) unsupported("message construction");
        auto n = make(NodeKind::kIdent, at);
        n->name = t.text;
        return n;
      }
      case Tok::kPunct:
        break;
    }
    if (accept("(")) {
      auto inner = expr();
      expect(")");
      return inner;
    }
    if (accept("[")) return make(NodeKind::kList, at, arguments("]"));
    if (is("{")) unsupported("map literals");
    if (is(".")) unsupported("leading-dot identifiers");
    fail_here("mismatched input '" + describe(t) + "' expecting an expression");
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int descent_ = 0;
};

}  // namespace

std::unique_ptr<Node> parse_expression(std::string_view text) {
  return Parser(text, lex(text)).parse();
}

}  // namespace gpuadmit::policy::cel
