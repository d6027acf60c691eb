// A strict RFC 8259 reader that builds nlohmann::json directly. nlohmann's own parser spends most of its
// time copying every byte into a token buffer kept for error messages (about 120 instructions per byte of
// an AdmissionReview); this one scans strings in runs, checks depth as it descends (no pre-scan), and can
// drop members the caller never reads (managedFields, status, oldObject) after checking their syntax.
//
// It accepts exactly what nlohmann accepts, with the same values: non-negative integers become unsigned,
// negative ones signed, integers too large for 64 bits become doubles, duplicate keys keep the last value,
// strings must be valid UTF-8 and \u escapes must pair surrogates. One difference: a number whose magnitude
// is beyond a double (1e400) is an error here, where nlohmann would store infinity and later print null.
#include "json_reader.hpp"

#include <charconv>
#include <cstdint>
#include <string>

#include "json_chars.hpp"

namespace gpuadmit::k8s {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxDropPaths = 32;
constexpr std::size_t kMaxDepth = 1000;
using DropMask = std::uint32_t;

class Reader {
 public:
  Reader(std::string_view text, std::size_t max_depth, std::span<const JsonPath> drop)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        max_depth_(max_depth),
        drop_(drop) {}

  Result<json> document() {
    json out;
    skip_space();
    const DropMask all = drop_.empty() ? 0 : static_cast<DropMask>((std::uint64_t{1} << drop_.size()) - 1);
    if (!value(&out, 0, all)) {
      return make_error(error_);
    }
    skip_space();
    if (p_ != end_) {
      fail("unexpected content after the JSON value");
      return make_error(error_);
    }
    return out;
  }

 private:
  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t max_depth_;
  std::span<const JsonPath> drop_;
  std::string error_;

  bool fail(std::string_view what) {
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

  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  // `out` is null while checking a dropped value: syntax only, nothing stored.
  bool value(json* out, std::size_t depth, DropMask alive) {
    if (p_ == end_) {
      return fail("unexpected end of input; expected a value");
    }
    switch (*p_) {
      case '{':
        return object(out, depth + 1, alive);
      case '[':
        return array(out, depth + 1);
      case '"': {
        ++p_;
        if (out == nullptr) {
          return string(nullptr);
        }
        // Read straight into the value's own string: no temporary, no move.
        *out = json::value_t::string;
        return string(out->get_ptr<json::string_t*>());
      }
      case 't':
        return literal("true", out, json(true));
      case 'f':
        return literal("false", out, json(false));
      case 'n':
        return literal("null", out, json(nullptr));
      default:
        return number(out);
    }
  }

  bool literal(std::string_view word, json* out, json value) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return fail("invalid literal");
    }
    p_ += word.size();
    if (out != nullptr) {
      *out = std::move(value);
    }
    return true;
  }

  bool enter(std::size_t depth) {
    if (depth > max_depth_) {
      error_ = "nesting deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    ++p_;
    skip_space();
    return true;
  }

  // Which drop paths still match after descending into `key` at `depth` (1-based container depth), and
  // whether one of them ends here (the member is dropped).
  DropMask narrow(DropMask alive, std::size_t depth, const std::string& key, bool& drop_member) const {
    DropMask next = 0;
    for (std::size_t i = 0; i < drop_.size(); ++i) {
      if ((alive & (DropMask{1} << i)) == 0) {
        continue;
      }
      const JsonPath& path = drop_[i];
      if (path.size() < depth || path[depth - 1] != key) {
        continue;
      }
      if (path.size() == depth) {
        drop_member = true;
      } else {
        next |= DropMask{1} << i;
      }
    }
    return next;
  }

  bool object(json* out, std::size_t depth, DropMask alive) {
    if (!enter(depth)) {
      return false;
    }
    json::object_t* members = nullptr;
    if (out != nullptr) {
      *out = json::object();
      members = out->get_ptr<json::object_t*>();
    }
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    std::string key;
    while (true) {
      if (p_ == end_ || *p_ != '"') {
        return fail("expected a string as an object key");
      }
      ++p_;
      key.clear();
      if (!string(&key)) {
        return false;
      }
      skip_space();
      if (p_ == end_ || *p_ != ':') {
        return fail("expected ':' after an object key");
      }
      ++p_;
      skip_space();
      bool drop_member = false;
      const DropMask next = alive != 0 ? narrow(alive, depth, key, drop_member) : 0;
      if (members == nullptr || drop_member) {
        if (!value(nullptr, depth, 0)) {
          return false;
        }
      } else {
        // The member is made first and read in place (a duplicate key reads over the earlier value, which
        // is what keeping the last one means); the hint makes keys that arrive in order cost no search.
        const auto member = members->try_emplace(members->end(), std::move(key));
        key = std::string();
        if (!value(&member->second, depth, next)) {
          return false;
        }
      }
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        return true;
      }
      return fail("expected ',' or '}' after an object member");
    }
  }

  bool array(json* out, std::size_t depth) {
    if (!enter(depth)) {
      return false;
    }
    json::array_t* elements = nullptr;
    if (out != nullptr) {
      *out = json::array();
      elements = out->get_ptr<json::array_t*>();
    }
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    while (true) {
      if (elements == nullptr) {
        if (!value(nullptr, depth, 0)) {
          return false;
        }
      } else {
        elements->emplace_back();
        if (!value(&elements->back(), depth, 0)) {
          return false;
        }
      }
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        return true;
      }
      return fail("expected ',' or ']' after an array element");
    }
  }

  static int hex_digit(char c) {
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

  // Reads the 4 hex digits after "\u".
  bool hex4(std::uint32_t& code) {
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

  static void append_utf8(std::string& s, std::uint32_t code) {
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

  bool escape(std::string* out) {
    if (p_ == end_) {
      return fail("incomplete escape in a string");
    }
    const char c = *p_++;
    char plain = 0;
    switch (c) {
      case '"':
        plain = '"';
        break;
      case '\\':
        plain = '\\';
        break;
      case '/':
        plain = '/';
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u': {
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
      default:
        return fail("invalid escape in a string");
    }
    if (out != nullptr) {
      out->push_back(plain);
    }
    return true;
  }

  // One multi-byte UTF-8 sequence starting at p_ (a byte >= 0x80), as RFC 3629 allows it.
  bool utf8_sequence() {
    const std::ptrdiff_t length = utf8_sequence_length(p_, end_);
    if (length == 0) {
      return fail("invalid UTF-8 in a string");
    }
    p_ += length;
    return true;
  }

  // After the opening quote; leaves p_ after the closing one. Plain bytes and whole UTF-8 sequences are
  // copied in runs; escapes and the closing quote end a run.
  bool string(std::string* out) {
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
      if (out != nullptr) {
        out->append(run, static_cast<std::size_t>(p_ - run));  // (pointer, size): not the iterator overload
      }
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        ++p_;
        if (!escape(out)) {
          return false;
        }
        continue;
      }
      return fail("control character in a string (escape it)");
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number(json* out) {
    const char* start = p_;
    if (p_ != end_ && *p_ == '-') {
      ++p_;
    }
    if (p_ == end_ || !digit(*p_)) {
      p_ = start;
      return fail("invalid value (expected a string, number, object, array, true, false or null)");
    }
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && digit(*p_)) {
        return fail("leading zeros are not allowed in numbers");
      }
    } else {
      while (p_ != end_ && digit(*p_)) {
        ++p_;
      }
    }
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ == end_ || !digit(*p_)) {
        return fail("expected a digit after the decimal point");
      }
      while (p_ != end_ && digit(*p_)) {
        ++p_;
      }
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) {
        ++p_;
      }
      if (p_ == end_ || !digit(*p_)) {
        return fail("expected a digit in the exponent");
      }
      while (p_ != end_ && digit(*p_)) {
        ++p_;
      }
    }
    if (out == nullptr) {
      return true;
    }
    if (integer) {
      if (*start == '-') {
        std::int64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) {
          *out = v;
          return true;
        }
      } else {
        std::uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) {
          *out = v;
          return true;
        }
      }
    }
    double d = 0;
    const auto [end, ec] = std::from_chars(start, p_, d);
    if (ec != std::errc() || end != p_) {
      return fail("number out of range");
    }
    *out = d;
    return true;
  }
};

}  // namespace

Result<nlohmann::json> read_json(std::string_view text, std::size_t max_depth,
                                 std::span<const JsonPath> drop) {
  // Each level of nesting is a stack frame here (a few hundred bytes, more under sanitizers).
  if (max_depth > kMaxDepth) {
    return make_error("internal: a JSON depth limit of " + std::to_string(max_depth) + " (at most " +
                      std::to_string(kMaxDepth) + ")");
  }
  if (drop.size() > kMaxDropPaths) {
    return make_error("internal: too many JSON drop paths");
  }
  return Reader(text, max_depth, drop).document();
}

}  // namespace gpuadmit::k8s
