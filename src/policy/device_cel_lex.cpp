// Device selectors: the lexer. Literals are decoded here with CEL's rules: all quote forms, raw strings,
// escapes (\x, \u, \U and octal escapes are code points, written as UTF-8), decimal and hex ints, uints and
// doubles; bytes literals are outside the subset.
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "device_cel_ast.hpp"
#include "device_cel_lex.hpp"

namespace gpuadmit::policy::cel {

[[noreturn]] void syntax_error(std::string_view text, std::size_t offset, const std::string& what) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw CompileStop{false, "compilation failed: ERROR: <input>:" + std::to_string(line) + ":" +
                               std::to_string(column) + ": Syntax error: " + what};
}
[[noreturn]] void unsupported(const std::string& what) {
  throw CompileStop{true, "not evaluated: " + what};
}

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int hex_value(char c) {
  return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      skip_space();
      Token t;
      t.offset = pos_;
      if (pos_ >= text_.size()) {
        out.push_back(t);
        return out;
      }
      const char c = text_[pos_];
      const bool after_operand = !out.empty() && (out.back().kind != Tok::kPunct || out.back().text == ")" ||
                                                  out.back().text == "]" || out.back().text == "}");
      if (is_ident_start(c)) {
        lex_word(t);
      } else if (is_digit(c) ||
                 (c == '.' && !after_operand && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
        lex_number(t);
      } else if (c == '"' || c == '\'') {
        lex_string(t, false);
      } else {
        lex_punct(t);
      }
      out.push_back(std::move(t));
    }
  }

 private:
  void skip_space() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  void lex_word(Token& t) {
    std::size_t end = pos_;
    while (end < text_.size() && (is_ident_start(text_[end]) || is_digit(text_[end]))) ++end;
    const std::string_view word = text_.substr(pos_, end - pos_);
    // String prefixes: r/R raw, b/B bytes, in either order.
    if (end < text_.size() && (text_[end] == '"' || text_[end] == '\'') && word.size() <= 2) {
      bool raw = false;
      bool bytes = false;
      bool prefix = true;
      for (char p : word) {
        if ((p == 'r' || p == 'R') && !raw) {
          raw = true;
        } else if ((p == 'b' || p == 'B') && !bytes) {
          bytes = true;
        } else {
          prefix = false;
        }
      }
      if (prefix) {
        if (bytes) unsupported("bytes literals");
        pos_ = end;
        lex_string(t, raw);
        return;
      }
    }
    static constexpr std::array<std::string_view, 16> kReserved{
        "as",     "break", "const", "continue", "else",      "for",    "function", "if",
        "import", "let",   "loop",  "package",  "namespace", "return", "var",      "void"};
    for (auto r : kReserved) {
      if (word == r) syntax_error(text_, pos_, "reserved identifier: " + std::string(word));
    }
    if (word == "while") syntax_error(text_, pos_, "reserved identifier: while");
    t.kind = Tok::kIdent;
    t.text = std::string(word);
    pos_ = end;
  }

  void lex_number(Token& t) {
    const std::size_t start = pos_;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() && (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X')) {
      std::size_t end = pos_ + 2;
      while (end < text_.size() && is_hex(text_[end])) ++end;
      if (end == pos_ + 2) syntax_error(text_, start, "invalid hex literal");
      std::uint64_t v = 0;
      auto [p, ec] = std::from_chars(text_.data() + pos_ + 2, text_.data() + end, v, 16);
      if (ec != std::errc()) syntax_error(text_, start, "invalid int literal");
      pos_ = end;
      finish_integer(t, v, start);
      return;
    }
    std::size_t end = pos_;
    while (end < text_.size() && is_digit(text_[end])) ++end;
    bool real = false;
    if (end + 1 < text_.size() && text_[end] == '.' && is_digit(text_[end + 1])) {
      real = true;
      ++end;
      while (end < text_.size() && is_digit(text_[end])) ++end;
    }
    if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
      std::size_t e = end + 1;
      if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
      if (e < text_.size() && is_digit(text_[e])) {
        real = true;
        end = e;
        while (end < text_.size() && is_digit(text_[end])) ++end;
      }
    }
    if (real) {
      const std::string digits(text_.substr(pos_, end - pos_));
      t.kind = Tok::kDouble;
      t.real = std::strtod(digits.c_str(), nullptr);
      pos_ = end;
      return;
    }
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(text_.data() + pos_, text_.data() + end, v, 10);
    if (ec != std::errc()) syntax_error(text_, start, "invalid int literal");
    pos_ = end;
    finish_integer(t, v, start);
  }

  void finish_integer(Token& t, std::uint64_t v, std::size_t start) {
    if (pos_ < text_.size() && (text_[pos_] == 'u' || text_[pos_] == 'U')) {
      ++pos_;
      t.kind = Tok::kUint;
    } else {
      // 2^63 is kept for `-9223372036854775808`; the parser rejects it anywhere else.
      if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1) {
        syntax_error(text_, start, "invalid int literal");
      }
      t.kind = Tok::kInt;
    }
    t.magnitude = v;
  }

  void lex_string(Token& t, bool raw) {
    const std::size_t start = pos_;
    const char q = text_[pos_];
    const bool triple = text_.substr(pos_, 3) == std::string(3, q);
    pos_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) syntax_error(text_, start, "token recognition error: unterminated string");
      const char c = text_[pos_];
      if (triple ? text_.substr(pos_, 3) == std::string(3, q) : c == q) {
        pos_ += triple ? 3 : 1;
        break;
      }
      if (!triple && (c == '\n' || c == '\r'))
        syntax_error(text_, pos_, "token recognition error: newline in string");
      if (c != '\\' || raw) {
        out += c;
        ++pos_;
        continue;
      }
      decode_escape(out);
    }
    t.kind = Tok::kString;
    t.text = std::move(out);
  }

  // The escape sequence at pos_ (a backslash), appended to `out` decoded.
  void decode_escape(std::string& out) {
    if (pos_ + 1 >= text_.size()) syntax_error(text_, pos_, "token recognition error: bad escape");
    const char e = text_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
      case '?':
      case '"':
      case '\'':
      case '`':
        out += e;
        break;
      case 'x':
      case 'X':
      case 'u':
      case 'U': {
        const int digits = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
        std::uint32_t cp = 0;
        for (int i = 0; i < digits; ++i) {
          if (pos_ >= text_.size() || !is_hex(text_[pos_]))
            syntax_error(text_, pos_, "invalid escape sequence");
          cp = cp * 16 + static_cast<std::uint32_t>(hex_value(text_[pos_++]));
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
          syntax_error(text_, pos_, "invalid unicode code point");
        append_utf8(out, cp);
        break;
      }
      default:
        if (e >= '0' && e <= '3' && pos_ + 1 < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '7' &&
            text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '7') {
          append_utf8(out, static_cast<std::uint32_t>((e - '0') * 64 + (text_[pos_] - '0') * 8 +
                                                      (text_[pos_ + 1] - '0')));
          pos_ += 2;
          break;
        }
        syntax_error(text_, pos_ - 2, "token recognition error: invalid escape sequence");
    }
  }

  void lex_punct(Token& t) {
    static constexpr std::array<std::string_view, 7> kTwo{"==", "!=", "<=", ">=", "&&", "||", "[?"};
    for (auto two : kTwo) {
      if (text_.substr(pos_, 2) == two) {
        t.kind = Tok::kPunct;
        t.text = std::string(two);
        pos_ += 2;
        return;
      }
    }
    static constexpr std::string_view kOne = "()[]{}.,?:!-+*/%<>";
    if (kOne.find(text_[pos_]) == std::string_view::npos) {
      syntax_error(text_, pos_, std::string("token recognition error at: '") + text_[pos_] + "'");
    }
    t.kind = Tok::kPunct;
    t.text = std::string(1, text_[pos_]);
    ++pos_;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<Token> lex(std::string_view text) {
  return Lexer(text).run();
}

}  // namespace gpuadmit::policy::cel
