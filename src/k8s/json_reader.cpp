// A strict RFC 8259 parser that builds a JsonDocument: values in an arena, strings as views into the text.
// nlohmann's own parser copies every byte it reads into a token buffer, kept only for its error messages;
// this one scans strings in runs, checks depth as it descends (no pre-scan), and can drop members the
// caller never reads (managedFields, status, oldObject) after checking their syntax. read_json converts the
// document to nlohmann::json: members arrive sorted, so each goes in at the end of its map with one
// comparison.
//
// It accepts exactly what nlohmann accepts, with the same values: non-negative integers become unsigned,
// negative ones signed, integers too large for 64 bits become doubles, duplicate keys keep the last value,
// strings must be valid UTF-8 and \u escapes must pair surrogates, a number beyond a double (1e400) is an
// error and one that underflows is what strtod gives. Two differences, both outside RFC 8259 and never sent
// by the API server: nlohmann skips a leading byte order mark and stops reading at a NUL byte; here both
// are errors.
#include "json_reader.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "gpuadmit/k8s/json_document.hpp"
#include "json_chars.hpp"

namespace gpuadmit::k8s {

namespace {

// Byte order, as std::string's operator< (and so nlohmann's std::map) has it. Keys mostly differ in their
// first byte, which is compared here without calling memcmp.
inline bool key_less(std::string_view a, std::string_view b) noexcept {
  if (!a.empty() && !b.empty() && a.front() != b.front()) {
    return static_cast<unsigned char>(a.front()) < static_cast<unsigned char>(b.front());
  }
  return a < b;
}

// The first and the last `Word` of the `n` bytes at `x` and `y` are equal (they overlap when n is below
// twice the word): with n from sizeof(Word) to twice that, the bytes are equal.
template <class Word>
bool same_ends(const char* x, const char* y, std::size_t n) noexcept {
  Word x0 = 0;
  Word y0 = 0;
  Word x1 = 0;
  Word y1 = 0;
  std::memcpy(&x0, x, sizeof(Word));
  std::memcpy(&y0, y, sizeof(Word));
  std::memcpy(&x1, x + n - sizeof(Word), sizeof(Word));
  std::memcpy(&y1, y + n - sizeof(Word), sizeof(Word));
  return x0 == y0 && x1 == y1;
}

// The `n` bytes at `x` and `y` are equal. Keys are short, and comparing them in registers beats a call to
// memcmp.
bool same_bytes(const char* x, const char* y, std::size_t n) noexcept {
  if (n > 16) {
    return std::memcmp(x, y, n) == 0;
  }
  if (n >= 8) {
    return same_ends<std::uint64_t>(x, y, n);
  }
  if (n >= 4) {
    return same_ends<std::uint32_t>(x, y, n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) {
      return false;
    }
  }
  return true;
}

// Equal keys: most candidates differ in length, which is tested where the call is.
inline bool same_key(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size());
}

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const noexcept {
  if (type_ != JsonType::kObject) {
    return nullptr;
  }
  const auto list = members();
  if (list.size() <= 8) {
    // Most objects are this small: a scan that compares lengths first beats a binary search's memcmp calls.
    for (const JsonMember& m : list) {
      if (same_key(m.key, key)) {
        return &m.value;
      }
    }
    return nullptr;
  }
  const auto it =
      std::lower_bound(list.begin(), list.end(), key,
                       [](const JsonMember& m, std::string_view k) { return key_less(m.key, k); });
  return it != list.end() && same_key(it->key, key) ? &it->value : nullptr;
}

namespace {

constexpr std::size_t kMaxDropPaths = 32;
constexpr std::size_t kMaxDepth = 1000;
constexpr std::size_t kMaxCount = std::numeric_limits<std::uint32_t>::max();
using DropMask = std::uint32_t;

}  // namespace

// Writes JsonValue's union members only together with the tag that names them.
// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
class JsonBuilder {
 public:
  JsonBuilder(std::string_view text, std::size_t max_depth, std::span<const JsonPath> drop, JsonDocument& doc)
      : begin_(text.data()),
        p_(text.data()),
        end_(text.data() + text.size()),
        max_depth_(max_depth),
        drop_(drop),
        doc_(doc),
        block_size_(std::clamp<std::size_t>(text.size() * 2, 4096, kLargestBlock)) {
    // Room for the open containers of a typical review (3 KB of stack): grown from empty, the stacks were
    // reallocated seven times per review.
    items_.reserve(kStackReserve);
    members_.reserve(kStackReserve);
  }

  bool document() {
    skip_space();
    const DropMask all = drop_.empty() ? 0 : static_cast<DropMask>((std::uint64_t{1} << drop_.size()) - 1);
    if (!value(&doc_.root_, 0, all)) {
      return false;
    }
    skip_space();
    if (p_ != end_) {
      return fail("unexpected content after the JSON value");
    }
    return true;
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  static constexpr std::size_t kLargestBlock = std::size_t{1} << 20;
  static constexpr std::size_t kStackReserve = 64;

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t max_depth_;
  std::span<const JsonPath> drop_;
  JsonDocument& doc_;
  std::string error_;
  // Containers are read onto these stacks and copied to the arena, sized, when they close.
  std::vector<JsonValue> items_;
  std::vector<JsonMember> members_;
  std::string unescaped_;
  std::byte* next_ = nullptr;
  std::size_t left_ = 0;
  std::size_t block_size_;

  void* allocate(std::size_t bytes) {
    bytes = (bytes + 7) & ~std::size_t{7};
    if (bytes > left_) {
      const std::size_t size = std::max(bytes, block_size_);
      doc_.blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(size));  // nothing is zeroed
      next_ = doc_.blocks_.back().get();
      left_ = size;
      block_size_ = std::min(block_size_ * 2, kLargestBlock);
    }
    void* out = next_;
    next_ += bytes;
    left_ -= bytes;
    return out;
  }

  // A copy of `n` trivially copyable values in the arena (nullptr for none): containers when they close,
  // strings that had escapes.
  template <class T>
  const T* store(const T* first, std::size_t n) {
    if (n == 0) {
      return nullptr;
    }
    auto* stored = static_cast<T*>(allocate(n * sizeof(T)));
    std::memcpy(static_cast<void*>(stored), first, n * sizeof(T));
    return stored;
  }

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
    // The API server sends compact JSON: most calls find no space, and one compare says so.
    if (p_ != end_ && static_cast<unsigned char>(*p_) > ' ') {
      return;
    }
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  // `out` is null while checking a dropped value: syntax only, nothing stored.
  bool value(JsonValue* out, std::size_t depth, DropMask alive) {
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
        std::string_view text;
        if (!string(out != nullptr ? &text : nullptr)) {
          return false;
        }
        if (out != nullptr) {
          out->type_ = JsonType::kString;
          out->size_ = static_cast<std::uint32_t>(text.size());
          out->chars_ = text.data();
        }
        return true;
      }
      case 't':
        return literal("true", out, JsonType::kBoolean, true);
      case 'f':
        return literal("false", out, JsonType::kBoolean, false);
      case 'n':
        return literal("null", out, JsonType::kNull, false);
      default:
        return number(out);
    }
  }

  bool literal(std::string_view word, JsonValue* out, JsonType type, bool truth) {
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
  DropMask narrow(DropMask alive, std::size_t depth, std::string_view key, bool& drop_member) const {
    DropMask next = 0;
    for (DropMask left = alive; left != 0; left &= left - 1) {  // only the paths still alive
      const auto i = static_cast<std::size_t>(std::countr_zero(left));
      const JsonPath& path = drop_[i];
      if (path.size() < depth || !same_key(path[depth - 1], key)) {
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

  // Sorted by key, stable, and a repeated key keeps its last value: what std::map with insert_or_assign
  // holds. Objects are small, so an insertion sort (no allocation) does most of them.
  bool close_object(JsonValue* out, std::size_t base) {
    JsonMember* first = members_.data() + base;
    std::size_t n = members_.size() - base;
    const auto by_key = [](const JsonMember& a, const JsonMember& b) { return key_less(a.key, b.key); };
    bool repeated = false;
    if (n <= 32) {
      for (std::size_t i = 1; i < n; ++i) {
        const JsonMember m = first[i];
        std::size_t j = i;
        for (; j > 0 && key_less(m.key, first[j - 1].key); --j) {
          first[j] = first[j - 1];
        }
        first[j] = m;
        // What moved up is greater than m, so an equal key can only be the one just below it.
        repeated = repeated || (j > 0 && same_key(first[j - 1].key, m.key));
      }
    } else {
      std::stable_sort(first, first + n, by_key);
      repeated = true;  // not tracked: look
    }
    if (repeated) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + 1 < n && same_key(first[i + 1].key, first[i].key)) {
          continue;  // a later duplicate wins
        }
        first[kept++] = first[i];
      }
      n = kept;
    }
    if (n > kMaxCount) {
      return fail("an object with more than 2^32 members");
    }
    out->type_ = JsonType::kObject;
    out->size_ = static_cast<std::uint32_t>(n);
    out->members_ = store(first, n);
    members_.resize(base);
    return true;
  }

  bool close_array(JsonValue* out, std::size_t base) {
    const std::size_t n = items_.size() - base;
    if (n > kMaxCount) {
      return fail("a list with more than 2^32 items");
    }
    out->type_ = JsonType::kArray;
    out->size_ = static_cast<std::uint32_t>(n);
    out->items_ = store(items_.data() + base, n);
    items_.resize(base);
    return true;
  }

  bool object(JsonValue* out, std::size_t depth, DropMask alive) {
    if (!enter(depth)) {
      return false;
    }
    const std::size_t base = members_.size();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return out == nullptr || close_object(out, base);
    }
    while (true) {
      if (p_ == end_ || *p_ != '"') {
        return fail("expected a string as an object key");
      }
      ++p_;
      std::string_view key;
      if (!string(out != nullptr ? &key : nullptr)) {
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
      if (out == nullptr || drop_member) {
        if (!value(nullptr, depth, 0)) {
          return false;
        }
      } else {
        JsonMember member{key, {}};
        if (!value(&member.value, depth, next)) {
          return false;
        }
        members_.push_back(member);
      }
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ != end_ && *p_ == '}') {
        ++p_;
        return out == nullptr || close_object(out, base);
      }
      return fail("expected ',' or '}' after an object member");
    }
  }

  bool array(JsonValue* out, std::size_t depth) {
    if (!enter(depth)) {
      return false;
    }
    const std::size_t base = items_.size();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return out == nullptr || close_array(out, base);
    }
    while (true) {
      if (out == nullptr) {
        if (!value(nullptr, depth, 0)) {
          return false;
        }
      } else {
        JsonValue element;
        if (!value(&element, depth, 0)) {
          return false;
        }
        items_.push_back(element);
      }
      skip_space();
      if (p_ != end_ && *p_ == ',') {
        ++p_;
        skip_space();
        continue;
      }
      if (p_ != end_ && *p_ == ']') {
        ++p_;
        return out == nullptr || close_array(out, base);
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

  // After the opening quote; leaves p_ after the closing one. A string without escapes is a view into the
  // text; one with escapes is decoded and stored in the arena. Most strings are plain ASCII up to their
  // closing quote: that case is kept small enough to inline, and the rest is read by string_with_specials.
  bool string(std::string_view* out) {
    const char* start = p_;
    p_ = skip_plain_ascii(p_, end_);
    if (p_ != end_ && *p_ == '"' && static_cast<std::size_t>(p_ - start) <= kMaxCount) [[likely]] {
      if (out != nullptr) {
        *out = std::string_view(start, static_cast<std::size_t>(p_ - start));
      }
      ++p_;
      return true;
    }
    p_ = start;
    return string_with_specials(out);
  }

  [[gnu::noinline]] bool string_with_specials(std::string_view* out) {
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
        if (out != nullptr) {
          if (!escaped) {
            *out = std::string_view(start, static_cast<std::size_t>(p_ - start));
          } else {
            unescaped_.append(run, static_cast<std::size_t>(p_ - run));
            if (unescaped_.size() > kMaxCount) {
              return fail("a string longer than 4 GiB");
            }
            *out = std::string_view(store(unescaped_.data(), unescaped_.size()), unescaped_.size());
          }
        }
        ++p_;
        if (!escaped && static_cast<std::size_t>(p_ - start) > kMaxCount) {
          return fail("a string longer than 4 GiB");
        }
        return true;
      }
      if (c == '\\') {
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
        continue;
      }
      return fail("control character in a string (escape it)");
    }
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number(JsonValue* out) {
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
          out->type_ = JsonType::kInteger;
          out->integer_ = v;
          return true;
        }
      } else {
        std::uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) {
          out->type_ = JsonType::kUnsigned;
          out->unsigned_ = v;
          return true;
        }
      }
    }
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
    out->type_ = JsonType::kFloat;
    out->floating_ = d;
    return true;
  }
};

// NOLINTEND(cppcoreguidelines-pro-type-union-access)

Result<JsonDocument> JsonDocument::parse(std::string_view text, std::size_t max_depth,
                                         std::span<const JsonPath> drop) {
  // Each level of nesting is a stack frame here (a few hundred bytes, more under sanitizers).
  if (max_depth > kMaxDepth) {
    return make_error("internal: a JSON depth limit of " + std::to_string(max_depth) + " (at most " +
                      std::to_string(kMaxDepth) + ")");
  }
  if (drop.size() > kMaxDropPaths) {
    return make_error("internal: too many JSON drop paths");
  }
  JsonDocument doc;
  JsonBuilder builder(text, max_depth, drop, doc);
  if (!builder.document()) {
    return make_error(builder.error());
  }
  return doc;
}

Result<nlohmann::json> read_json(std::string_view text, std::size_t max_depth,
                                 std::span<const JsonPath> drop) {
  auto doc = JsonDocument::parse(text, max_depth, drop);
  if (!doc) {
    return doc.error();
  }
  return to_json(doc->root());
}

}  // namespace gpuadmit::k8s
