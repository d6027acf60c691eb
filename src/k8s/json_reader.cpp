// A strict RFC 8259 parser that builds a JsonDocument: values in an arena, strings as views into the text.
// nlohmann's own parser copies every byte it reads into a token buffer, kept only for its error messages;
// this one scans strings in runs, checks depth as it descends (no pre-scan), and can drop members the
// caller never reads (managedFields, status, oldObject) after checking their syntax. read_json converts the
// document to nlohmann::json: members arrive sorted, so each goes in at the end of its map with one
// comparison. This file reads the containers; json_scanner.cpp reads the scalars.
//
// It accepts exactly what nlohmann accepts, with the same values (json_scanner.cpp says which), and
// duplicate keys keep the last value. Two differences, both outside RFC 8259 and never sent by the API
// server: nlohmann skips a leading byte order mark and stops reading at a NUL byte; here both are errors.
#include "json_reader.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpuadmit/k8s/json_document.hpp"
#include "json_arena.hpp"
#include "json_scanner.hpp"

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
using DropMask = std::uint32_t;

}  // namespace

// Writes JsonValue's union members only together with the tag that names them.
// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access)
class JsonBuilder {
 public:
  JsonBuilder(std::string_view text, std::size_t max_depth, std::span<const JsonPath> drop, JsonDocument& doc)
      : max_depth_(max_depth), drop_(drop), doc_(doc), arena_(doc.blocks_, text.size()), scan_(text, arena_) {
    // Room for the open containers of a typical review (3 KB of stack): grown from empty, the stacks were
    // reallocated seven times per review.
    items_.reserve(kStackReserve);
    members_.reserve(kStackReserve);
  }

  bool document() {
    scan_.skip_space();
    const DropMask all = drop_.empty() ? 0 : static_cast<DropMask>((std::uint64_t{1} << drop_.size()) - 1);
    if (!value(&doc_.root_, 0, all)) {
      return false;
    }
    scan_.skip_space();
    if (!scan_.at_end()) {
      return scan_.fail("unexpected content after the JSON value");
    }
    return true;
  }

  [[nodiscard]] const std::string& error() const { return scan_.error(); }

 private:
  static constexpr std::size_t kStackReserve = 64;

  std::size_t max_depth_;
  std::span<const JsonPath> drop_;
  JsonDocument& doc_;
  JsonArena arena_;
  JsonScanner scan_;
  // Containers are read onto these stacks and copied to the arena, sized, when they close.
  std::vector<JsonValue> items_;
  std::vector<JsonMember> members_;

  // `out` is null while checking a dropped value: syntax only, nothing stored.
  bool value(JsonValue* out, std::size_t depth, DropMask alive) {
    if (scan_.at_end()) {
      return scan_.fail("unexpected end of input; expected a value");
    }
    switch (scan_.peek()) {
      case '{':
        return object(out, depth + 1, alive);
      case '[':
        return array(out, depth + 1);
      case '"':
        return string_value(out);
      case 't':
        return scan_.literal("true", out, JsonType::kBoolean, true);
      case 'f':
        return scan_.literal("false", out, JsonType::kBoolean, false);
      case 'n':
        return scan_.literal("null", out, JsonType::kNull, false);
      default:
        return scan_.number(out);
    }
  }

  bool string_value(JsonValue* out) {
    scan_.step();
    std::string_view text;
    if (!scan_.string(out != nullptr ? &text : nullptr)) {
      return false;
    }
    if (out != nullptr) {
      out->type_ = JsonType::kString;
      out->size_ = static_cast<std::uint32_t>(text.size());
      out->chars_ = text.data();
    }
    return true;
  }

  bool enter(std::size_t depth) {
    if (depth > max_depth_) {
      return scan_.refuse("nesting deeper than " + std::to_string(max_depth_) + " levels");
    }
    scan_.step();
    scan_.skip_space();
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
    std::size_t n = sort_members(first, members_.size() - base);
    if (n > kMaxJsonCount) {
      return scan_.fail("an object with more than 2^32 members");
    }
    out->type_ = JsonType::kObject;
    out->size_ = static_cast<std::uint32_t>(n);
    out->members_ = arena_.store(first, n);
    members_.resize(base);
    return true;
  }

  // Sorts the `n` members at `first` and drops all but the last of each repeated key; returns how many are
  // left.
  static std::size_t sort_members(JsonMember* first, std::size_t n) {
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
    if (!repeated) {
      return n;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + 1 < n && same_key(first[i + 1].key, first[i].key)) {
        continue;  // a later duplicate wins
      }
      first[kept++] = first[i];
    }
    return kept;
  }

  bool close_array(JsonValue* out, std::size_t base) {
    const std::size_t n = items_.size() - base;
    if (n > kMaxJsonCount) {
      return scan_.fail("a list with more than 2^32 items");
    }
    out->type_ = JsonType::kArray;
    out->size_ = static_cast<std::uint32_t>(n);
    out->items_ = arena_.store(items_.data() + base, n);
    items_.resize(base);
    return true;
  }

  // One "key": value of an object at `depth`, kept in members_ unless it is dropped.
  bool member(bool keep, std::size_t depth, DropMask alive) {
    if (!scan_.take('"')) {
      return scan_.fail("expected a string as an object key");
    }
    std::string_view key;
    if (!scan_.string(keep ? &key : nullptr)) {
      return false;
    }
    scan_.skip_space();
    if (!scan_.take(':')) {
      return scan_.fail("expected ':' after an object key");
    }
    scan_.skip_space();
    bool drop_member = false;
    const DropMask next = alive != 0 ? narrow(alive, depth, key, drop_member) : 0;
    if (!keep || drop_member) {
      return value(nullptr, depth, 0);
    }
    JsonMember member{key, {}};
    if (!value(&member.value, depth, next)) {
      return false;
    }
    members_.push_back(member);
    return true;
  }

  bool object(JsonValue* out, std::size_t depth, DropMask alive) {
    if (!enter(depth)) {
      return false;
    }
    const std::size_t base = members_.size();
    if (scan_.take('}')) {
      return out == nullptr || close_object(out, base);
    }
    while (true) {
      if (!member(out != nullptr, depth, alive)) {
        return false;
      }
      scan_.skip_space();
      if (scan_.take(',')) {
        scan_.skip_space();
        continue;
      }
      if (scan_.take('}')) {
        return out == nullptr || close_object(out, base);
      }
      return scan_.fail("expected ',' or '}' after an object member");
    }
  }

  bool array(JsonValue* out, std::size_t depth) {
    if (!enter(depth)) {
      return false;
    }
    const std::size_t base = items_.size();
    if (scan_.take(']')) {
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
      scan_.skip_space();
      if (scan_.take(',')) {
        scan_.skip_space();
        continue;
      }
      if (scan_.take(']')) {
        return out == nullptr || close_array(out, base);
      }
      return scan_.fail("expected ',' or ']' after an array element");
    }
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
