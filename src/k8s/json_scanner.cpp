// The scalar readers of the JSON reader, with nlohmann's values: non-negative integers become unsigned,
// negative ones signed, integers too large for 64 bits become doubles, strings must be valid UTF-8 and \u
// escapes must pair surrogates, a number beyond a double (1e400) is an error and one that underflows is
// what strtod gives.
#include "json_scanner.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace gpuadmit::k8s {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

void append_utf8(std::string& s, std::uint32_t code) {
  if (code < 0x80) {
    s.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    s.push_back(static_cast<char>(0xC0 | (code >> 6)));
    s.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    s.push_back(static_cast<char>(0xE0 | (code >> 12)));
    s.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    s.push_back(static_cast<char>(0xF0 | (code >> 18)));
    s.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    s.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// The byte a one-letter escape stands for, or 0 when there is no such escape (none stands for NUL).
char simple_escape(char c) {
  switch (c) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case '/':
      return '/';
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return 0;
  }
}

bool digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool JsonScanner::fail(std::string_view what) {
  if (!error_.empty()) {
    return false;
  }
  std::size_t line = 1;
  std::size_t column = 1;
  for (const char* c = begin_; c < p_ && c < end_; ++c) {
    if (*c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  error_ = "malformed JSON: parse error at line " + std::to_string(line) + ", column " +
           std::to_string(column) + ": " + std::string(what);
  return false;
}

bool JsonScanner::refuse(std::string message) {
  error_ = std::move(message);
  return false;
}

// Writes JsonValue's union members only together with the tag that names them.
// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)

bool JsonScanner::literal(std::string_view word, JsonValue* out, JsonType type, bool truth) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
    return fail("invalid literal");
  }
  p_ += word.size();
  if (out != nullptr) {
    out->type_ = type;
    out->boolean_ = truth;
  }
  return true;
}

// Reads the 4 hex digits after "\u".
bool JsonScanner::hex4(std::uint32_t& code) {
  if (end_ - p_ < 4) {
    return fail("incomplete \\u escape");
  }
  code = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = hex_digit(p_[i]);
    if (d < 0) {
      return fail("invalid \\u escape");
    }
    code = code * 16 + static_cast<std::uint32_t>(d);
  }
  p_ += 4;
  return true;
}

// After "\u": one code point, or a high surrogate and the low one that must follow it.
bool JsonScanner::unicode_escape(std::string* out) {
  std::uint32_t code = 0;
  if (!hex4(code)) {
    return false;
  }
  if (code >= 0xDC00 && code <= 0xDFFF) {
    return fail("a low surrogate \\u escape without a high one");
  }
  if (code >= 0xD800 && code <= 0xDBFF) {
    std::uint32_t low = 0;
    if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') {
      return fail("a high surrogate must be followed by a low one");
    }
    p_ += 2;
    if (!hex4(low)) {
      return false;
    }
    if (low < 0xDC00 || low > 0xDFFF) {
      return fail("a high surrogate must be followed by a low one");
    }
    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
  }
  if (out != nullptr) {
    append_utf8(*out, code);
  }
  return true;
}

// After the backslash.
bool JsonScanner::escape(std::string* out) {
  if (p_ == end_) {
    return fail("incomplete escape in a string");
  }
  const char c = *p_++;
  if (c == 'u') {
    return unicode_escape(out);
  }
  const char plain = simple_escape(c);
  if (plain == 0) {
    return fail("invalid escape in a string");
  }
  if (out != nullptr) {
    out->push_back(plain);
  }
  return true;
}

// One multi-byte UTF-8 sequence starting at p_ (a byte >= 0x80), as RFC 3629 allows it.
bool JsonScanner::utf8_sequence() {
  const std::ptrdiff_t length = utf8_sequence_length(p_, end_);
  if (length == 0) {
    return fail("invalid UTF-8 in a string");
  }
  p_ += length;
  return true;
}

// At the closing quote of the string that began at `start`; `run` is where its last run of plain text began.
bool JsonScanner::string_end(std::string_view* out, const char* start, const char* run, bool escaped) {
  if (out != nullptr) {
    if (!escaped) {
      *out = std::string_view(start, static_cast<std::size_t>(p_ - start));
    } else {
      unescaped_.append(run, static_cast<std::size_t>(p_ - run));
      if (unescaped_.size() > kMaxJsonCount) {
        return fail("a string longer than 4 GiB");
      }
      *out = std::string_view(arena_.store(unescaped_.data(), unescaped_.size()), unescaped_.size());
    }
  }
  ++p_;
  if (!escaped && static_cast<std::size_t>(p_ - start) > kMaxJsonCount) {
    return fail("a string longer than 4 GiB");
  }
  return true;
}

bool JsonScanner::string_with_specials(std::string_view* out) {
  const char* start = p_;
  bool escaped = false;
  while (true) {
    const char* run = p_;
    while (true) {
      p_ = skip_plain_ascii(p_, end_);
      if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x80) {
        break;  // the end, or a quote, backslash or control character
      }
      if (!utf8_sequence()) {
        return false;
      }
    }
    if (p_ == end_) {
      return fail("unterminated string");
    }
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      return string_end(out, start, run, escaped);
    }
    if (c != '\\') {
      return fail("control character in a string (escape it)");
    }
    if (out != nullptr) {
      if (!escaped) {
        unescaped_.assign(start, static_cast<std::size_t>(p_ - start));
      } else {
        unescaped_.append(run, static_cast<std::size_t>(p_ - run));
      }
    }
    escaped = true;
    ++p_;
    if (!escape(out != nullptr ? &unescaped_ : nullptr)) {
      return false;
    }
  }
}

void JsonScanner::skip_digits() noexcept {
  while (p_ != end_ && digit(*p_)) {
    ++p_;
  }
}

// RFC 8259's number: a sign, an integer part without leading zeros, a fraction, an exponent. `integer` says
// it had neither of the last two.
bool JsonScanner::number_syntax(bool& integer) {
  const char* start = p_;
  take('-');
  if (p_ == end_ || !digit(*p_)) {
    p_ = start;
    return fail("invalid value (expected a string, number, object, array, true, false or null)");
  }
  if (take('0')) {
    if (p_ != end_ && digit(*p_)) {
      return fail("leading zeros are not allowed in numbers");
    }
  } else {
    skip_digits();
  }
  integer = true;
  if (take('.')) {
    integer = false;
    if (p_ == end_ || !digit(*p_)) {
      return fail("expected a digit after the decimal point");
    }
    skip_digits();
  }
  if (take('e') || take('E')) {
    integer = false;
    if (!take('+')) {
      take('-');
    }
    if (p_ == end_ || !digit(*p_)) {
      return fail("expected a digit in the exponent");
    }
    skip_digits();
  }
  return true;
}

// [start, end) as a 64-bit integer, signed when negative; false when it does not fit.
bool JsonScanner::whole_number(const char* start, const char* end, JsonValue& out) {
  if (*start == '-') {
    std::int64_t v = 0;
    if (std::from_chars(start, end, v).ec != std::errc()) {
      return false;
    }
    out.type_ = JsonType::kInteger;
    out.integer_ = v;
    return true;
  }
  std::uint64_t v = 0;
  if (std::from_chars(start, end, v).ec != std::errc()) {
    return false;
  }
  out.type_ = JsonType::kUnsigned;
  out.unsigned_ = v;
  return true;
}

bool JsonScanner::floating(const char* start, JsonValue& out) {
  double d = 0;
  const auto [end, ec] = std::from_chars(start, p_, d);
  if (ec == std::errc::result_out_of_range && end == p_) {
    // Overflow is an error, as in nlohmann; underflow keeps what strtod gives, as nlohmann does (0 or the
    // nearest subnormal). Rare, so the copy strtod needs for its terminator costs nothing that matters.
    const std::string copy(start, p_);
    d = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(d)) {
      return fail("number out of range");
    }
  } else if (ec != std::errc() || end != p_) {
    return fail("number out of range");
  }
  out.type_ = JsonType::kFloat;
  out.floating_ = d;
  return true;
}

bool JsonScanner::number(JsonValue* out) {
  const char* start = p_;
  bool integer = true;
  if (!number_syntax(integer)) {
    return false;
  }
  if (out == nullptr) {
    return true;
  }
  if (integer && whole_number(start, p_, *out)) {
    return true;
  }
  return floating(start, *out);
}

// NOLINTEND(cppcoreguidelines-pro-type-union-access)

}  // namespace gpuadmit::k8s
