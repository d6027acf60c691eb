// The token readers under the JSON document builder: a cursor over the text that records the first error
// with its line and column, and the readers of the scalars (literals, strings and their escapes, numbers).
// The builder reads the containers. Private to the k8s layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "gpuadmit/k8s/json_document.hpp"
#include "json_arena.hpp"
#include "json_chars.hpp"

namespace gpuadmit::k8s {

// A string, an object or a list holds at most this many characters, members or items (JsonValue's size).
inline constexpr std::size_t kMaxJsonCount = std::numeric_limits<std::uint32_t>::max();

class JsonScanner {
 public:
  // `text` must outlive the scanner and the strings it reads; decoded strings go into `arena`.
  JsonScanner(std::string_view text, JsonArena& arena)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), arena_(arena) {}

  [[nodiscard]] bool at_end() const noexcept { return p_ == end_; }
  // The next byte; only when not at_end().
  [[nodiscard]] char peek() const noexcept { return *p_; }
  [[nodiscard]] bool at(char c) const noexcept { return p_ != end_ && *p_ == c; }
  void step() noexcept { ++p_; }
  // Steps over `c` when it is next.
  bool take(char c) noexcept {
    if (!at(c)) {
      return false;
    }
    ++p_;
    return true;
  }

  void skip_space() noexcept {
    // The API server sends compact JSON: most calls find no space, and one compare says so.
    if (p_ != end_ && static_cast<unsigned char>(*p_) > ' ') {
      return;
    }
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  // Records "parse error at line L, column C: what" unless an error is already recorded; returns false.
  bool fail(std::string_view what);
  // Records `message` as it is (a limit, not a place in the text); returns false.
  bool refuse(std::string message);
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

  // The readers below leave the cursor after what they read. A null `out` checks the syntax only (a value
  // that is dropped).
  bool literal(std::string_view word, JsonValue* out, JsonType type, bool truth);
  bool number(JsonValue* out);

  // After the opening quote; leaves the cursor after the closing one. A string without escapes is a view
  // into the text; one with escapes is decoded into the arena. Most strings are plain ASCII up to their
  // closing quote: that case is kept small enough to inline, and the rest is read by string_with_specials.
  bool string(std::string_view* out) {
    const char* start = p_;
    p_ = skip_plain_ascii(p_, end_);
    if (p_ != end_ && *p_ == '"' && static_cast<std::size_t>(p_ - start) <= kMaxJsonCount) [[likely]] {
      if (out != nullptr) {
        *out = std::string_view(start, static_cast<std::size_t>(p_ - start));
      }
      ++p_;
      return true;
    }
    p_ = start;
    return string_with_specials(out);
  }

 private:
  [[gnu::noinline]] bool string_with_specials(std::string_view* out);
  bool string_end(std::string_view* out, const char* start, const char* run, bool escaped);
  bool escape(std::string* out);
  bool unicode_escape(std::string* out);
  bool hex4(std::uint32_t& code);
  bool utf8_sequence();
  void skip_digits() noexcept;
  bool number_syntax(bool& integer);
  static bool whole_number(const char* start, const char* end, JsonValue& out);
  bool floating(const char* start, JsonValue& out);

  const char* begin_;
  const char* p_;
  const char* end_;
  JsonArena& arena_;
  std::string error_;
  std::string unescaped_;  // the decoded string being read, reused
};

}  // namespace gpuadmit::k8s
