// Device selectors: CEL's matches() uses RE2 syntax (Go's regexp); we run std::regex (ECMAScript grammar)
// on a translation of the part of RE2 whose meaning the two share, and leave the rest not evaluated:
// - translated: literals, `.` (→ `[^\n]`: ECMAScript's `.` also refuses `\r`), `^ $` (RE2 without (?m) is
//   whole-text anchored, as ECMAScript without multiline), classes with ranges and [:alpha:]-style names,
//   `\d \D \w \W \b \B`, `\s`/`\S` (→ RE2's `[\t\n\f\r ]`: ECMAScript's also takes `\v`), escaped
//   punctuation, `\n \t \r \f \v \xHH`, `\A \z`, groups, (?:...), named groups, a leading (?i), `| * + ?`,
//   `{n}`, `{n,}`, `{n,m}` and their lazy forms, a `{` that starts no repeat (a literal in RE2);
// - not evaluated: other flags, \p classes, \Q..\E, \C, back references and look-around (RE2 rejects them,
//   so Kubernetes reports an error we do not reproduce), any invalid pattern, repeats above 1000 (RE2's
//   limit), and non-ASCII patterns or subjects (RE2 matches UTF-8 code points, std::regex bytes).
// Matching uses libstdc++'s polynomial (breadth-first) executor over `[\s\S]*(?:P)[\s\S]*`, so the cost is
// subject length × automaton size and a hostile pattern cannot backtrack exponentially.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "device_cel_ast.hpp"

namespace gpuadmit::policy::cel {
namespace {

constexpr std::size_t kMaxPatternLength = 1000;
constexpr std::int64_t kMaxAutomatonSize = 2000;
constexpr std::size_t kMaxSubjectLength = 10 * 1024;
constexpr int kMaxGroupDepth = 20;

struct Stop {
  std::string why;
};

std::string hex_escape(char c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("\\x") + kDigits[u >> 4] + kDigits[u & 15];
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

class Translator {
 public:
  explicit Translator(std::string_view p) : p_(p) {}

  std::string run(bool& icase, std::int64_t& size) {
    if (p_.substr(0, 4) == "(?i)") {
      icase = true;
      pos_ = 4;
    }
    size = alternation(0);
    if (pos_ != p_.size()) throw Stop{"unbalanced ')' in the regular expression"};
    return out_;
  }

 private:
  // Returns the automaton size estimate of what it consumed.
  std::int64_t alternation(int depth) {
    if (depth > kMaxGroupDepth) throw Stop{"regular expression nested too deeply"};
    std::int64_t total = 0;
    while (true) {
      total += sequence(depth);
      if (pos_ < p_.size() && p_[pos_] == '|') {
        out_ += '|';
        ++pos_;
        continue;
      }
      return total;
    }
  }

  std::int64_t sequence(int depth) {
    std::int64_t total = 0;
    while (pos_ < p_.size() && p_[pos_] != '|' && p_[pos_] != ')') {
      std::int64_t atom_size = atom(depth);
      if (atom_size < 0) continue;  // an assertion: cannot repeat
      atom_size = repeat(atom_size);
      total += atom_size;
      if (total > kMaxAutomatonSize) throw Stop{"regular expression too large"};
    }
    return total;
  }

  // -1 for anchors and word boundaries (no repetition allowed after them in our subset).
  std::int64_t atom(int depth) {
    const char c = p_[pos_];
    if (c == '*' || c == '+' || c == '?')
      throw Stop{"invalid regular expression: missing argument to repetition operator"};
    if (c == '^' || c == '$') {
      out_ += c;
      ++pos_;
      return -1;
    }
    if (c == '.') {
      out_ += "[^\\n]";
      ++pos_;
      return 1;
    }
    if (c == '(') {
      ++pos_;
      if (p_.substr(pos_, 2) == "?:") {
        pos_ += 2;
        out_ += "(?:";
      } else if (p_.substr(pos_, 3) == "?P<" ||
                 (p_.substr(pos_, 2) == "?<" && p_.substr(pos_, 3) != "?<=" && p_.substr(pos_, 3) != "?<!")) {
        const std::size_t close = p_.find('>', pos_);
        if (close == std::string_view::npos) throw Stop{"invalid named group"};
        for (std::size_t i = pos_ + (p_[pos_ + 1] == 'P' ? 3 : 2); i < close; ++i) {
          if (!is_alnum(p_[i]) && p_[i] != '_') throw Stop{"invalid named group"};
        }
        pos_ = close + 1;
        out_ += '(';
      } else if (pos_ < p_.size() && p_[pos_] == '?') {
        throw Stop{"regular expression flags or look-around"};
      } else {
        out_ += '(';
      }
      const std::int64_t inner = alternation(depth + 1);
      if (pos_ >= p_.size() || p_[pos_] != ')') throw Stop{"invalid regular expression: missing closing )"};
      ++pos_;
      out_ += ')';
      return inner + 1;
    }
    if (c == '[') return bracket();
    if (c == '\\') return escape(false);
    if (c == '{') {
      // A '{' that begins no valid repeat is a literal in RE2; one that does has nothing to repeat here.
      std::size_t i = pos_ + 1;
      while (i < p_.size() && (is_digit(p_[i]) || p_[i] == ',')) ++i;
      if (i > pos_ + 1 && is_digit(p_[pos_ + 1]) && i < p_.size() && p_[i] == '}') {
        throw Stop{"invalid regular expression: missing argument to repetition operator"};
      }
      out_ += "\\{";
      ++pos_;
      return 1;
    }
    out_ += (is_alnum(c) || c == ' ' || c == '_') ? std::string(1, c) : hex_escape(c);
    ++pos_;
    return 1;
  }

  std::int64_t escape(bool in_class) {
    if (pos_ + 1 >= p_.size()) throw Stop{"invalid regular expression: trailing backslash"};
    const char e = p_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        out_ += '\\';
        out_ += e;
        return 1;
      case 's':
        out_ += in_class ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]";
        return 1;
      case 'S':
        if (in_class) throw Stop{"\\S inside a character class"};
        out_ += "[^\\t\\n\\f\\r ]";
        return 1;
      case 'b':
      case 'B':
        if (in_class) throw Stop{"\\b inside a character class"};
        out_ += '\\';
        out_ += e;
        return -1;
      case 'A':
        if (in_class) throw Stop{"\\A inside a character class"};
        out_ += '^';
        return -1;
      case 'z':
        if (in_class) throw Stop{"\\z inside a character class"};
        out_ += '$';
        return -1;
      default:
        return character_escape(e);
    }
  }

  // `\n \t \r \f \v \a \xHH` and escaped punctuation: one character.
  std::int64_t character_escape(char e) {
    switch (e) {
      case 'n':
        out_ += "\\n";
        return 1;
      case 't':
        out_ += "\\t";
        return 1;
      case 'r':
        out_ += "\\r";
        return 1;
      case 'f':
        out_ += "\\f";
        return 1;
      case 'v':
        out_ += "\\v";
        return 1;
      case 'a':
        out_ += "\\x07";
        return 1;
      case 'x': {
        std::uint32_t v = 0;
        if (pos_ + 1 < p_.size() && std::isxdigit(static_cast<unsigned char>(p_[pos_])) &&
            std::isxdigit(static_cast<unsigned char>(p_[pos_ + 1]))) {
          v = static_cast<std::uint32_t>(std::stoul(std::string(p_.substr(pos_, 2)), nullptr, 16));
          pos_ += 2;
        } else {
          throw Stop{"\\x{...} escape"};
        }
        if (v >= 0x80) throw Stop{"non-ASCII character in the regular expression"};
        out_ += hex_escape(static_cast<char>(v));
        return 1;
      }
      default:
        if (!is_alnum(e) && static_cast<unsigned char>(e) < 0x80) {  // escaped punctuation is itself
          out_ += hex_escape(e);
          return 1;
        }
        throw Stop{std::string("escape \\") + e + " in the regular expression"};
    }
  }

  std::int64_t bracket() {
    ++pos_;
    out_ += '[';
    if (pos_ < p_.size() && p_[pos_] == '^') {
      out_ += '^';
      ++pos_;
    }
    bool first = true;
    while (true) {
      if (pos_ >= p_.size()) throw Stop{"invalid regular expression: missing closing ]"};
      const char c = p_[pos_];
      if (c == ']' && !first) {
        ++pos_;
        out_ += ']';
        return 1;
      }
      first = false;
      if (c == '[' && p_.substr(pos_, 2) == "[:") {
        const std::size_t close = p_.find(":]", pos_ + 2);
        if (close == std::string_view::npos) throw Stop{"invalid character class name"};
        const std::string_view name = p_.substr(pos_ + 2, close - pos_ - 2);
        static constexpr std::string_view kNames[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                                      "lower", "print", "punct", "space", "upper", "xdigit"};
        bool known = false;
        for (auto n : kNames) known = known || n == name;
        // [:word:] and [:^alpha:] are RE2-only; space differs (\v) as \s does.
        if (!known || name == "space") throw Stop{"character class [:" + std::string(name) + ":]"};
        out_ += p_.substr(pos_, close + 2 - pos_);
        pos_ = close + 2;
        continue;
      }
      if (c == '\\') {
        if (escape(true) < 0) throw Stop{"assertion inside a character class"};
        continue;
      }
      if (static_cast<unsigned char>(c) >= 0x80) throw Stop{"non-ASCII character in the regular expression"};
      if (c == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']' && out_.back() != '[' &&
          out_.back() != '^') {
        out_ += '-';  // a range between the previous character and the next
      } else {
        out_ += is_alnum(c) ? std::string(1, c) : hex_escape(c);
      }
      ++pos_;
    }
  }

  // Applies any repetition after an atom of `size`; returns the size with the repetition.
  std::int64_t repeat(std::int64_t size) {
    if (pos_ >= p_.size()) return size;
    const char c = p_[pos_];
    std::int64_t result = size;
    if (c == '*' || c == '+' || c == '?') {
      out_ += c;
      ++pos_;
      result = size + 1;
    } else if (c == '{') {
      std::size_t i = pos_ + 1;
      auto number = [&](long& v) {
        const std::size_t start = i;
        v = 0;
        while (i < p_.size() && is_digit(p_[i]) && i - start < 5) v = v * 10 + (p_[i++] - '0');
        return i > start;
      };
      long lo = 0;
      long hi = -1;
      bool valid = number(lo);
      if (valid && i < p_.size() && p_[i] == ',') {
        ++i;
        if (!number(hi)) hi = -2;  // {n,}
      } else {
        hi = lo;
      }
      valid = valid && i < p_.size() && p_[i] == '}';
      if (!valid) return size;  // a literal '{', handled as the next atom
      if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
        throw Stop{"invalid repeat count in the regular expression"};
      out_ += p_.substr(pos_, i + 1 - pos_);
      pos_ = i + 1;
      result = size * std::max<long>({lo, hi, 1}) + 1;
    } else {
      return size;
    }
    if (pos_ < p_.size() && p_[pos_] == '?') {
      out_ += '?';
      ++pos_;
    }
    if (pos_ < p_.size() && (p_[pos_] == '*' || p_[pos_] == '+' || p_[pos_] == '?' ||
                             (p_[pos_] == '{' && pos_ + 1 < p_.size() && is_digit(p_[pos_ + 1])))) {
      throw Stop{"invalid regular expression: bad repetition operator"};
    }
    if (result > kMaxAutomatonSize) throw Stop{"regular expression too large"};
    return result;
  }

  std::string_view p_;
  std::size_t pos_ = 0;
  std::string out_;
};

}  // namespace

std::variant<std::shared_ptr<const Regex>, std::string> translate_re2(std::string_view pattern) {
  if (pattern.size() > kMaxPatternLength)
    return std::string("not evaluated: regular expression longer than 1000 bytes");
  if (!is_ascii(pattern)) return std::string("not evaluated: non-ASCII regular expression");
  try {
    bool icase = false;
    std::int64_t size = 0;
    const std::string body = Translator(pattern).run(icase, size);
    auto flags = std::regex::ECMAScript | std::regex_constants::__polynomial;
    if (icase) flags |= std::regex::icase;
    auto regex = std::make_shared<Regex>();
    regex->compiled = std::regex("[\\s\\S]*(?:" + body + ")[\\s\\S]*", flags);
    regex->size = size + 4;
    return std::shared_ptr<const Regex>(std::move(regex));
  } catch (const Stop& stop) {
    return "not evaluated: " + stop.why;
  } catch (const std::exception& e) {
    return std::string("not evaluated: std::regex cannot take this pattern (") + e.what() + ")";
  }
}

std::variant<bool, std::string> search(const Regex& regex, std::string_view subject) {
  if (subject.size() > kMaxSubjectLength)
    return std::string("not evaluated: matches() on a string over 10 KiB");
  if (!is_ascii(subject)) return std::string("not evaluated: matches() on non-ASCII text");
  try {
    return std::regex_match(subject.begin(), subject.end(), regex.compiled);
  } catch (const std::exception& e) {
    return std::string("not evaluated: std::regex failed (") + e.what() + ")";
  }
}

}  // namespace gpuadmit::policy::cel
