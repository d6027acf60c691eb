// A read-only JSON document in one arena. nlohmann's DOM gives every member a
// std::map node and every string its own heap block, and building and freeing those was two thirds of a
// /validate review. Here values are 16 bytes, containers are contiguous, strings are views into the text
// (or into the arena when they had escapes), and the document is freed in a few blocks at once.
//
// Objects hold their members sorted by key, with a duplicate key keeping its last value: exactly what
// nlohmann's std::map holds, in the same order, so a conversion inserts every member at the end of its map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::k8s {

enum class JsonType : std::uint8_t { kNull, kBoolean, kInteger, kUnsigned, kFloat, kString, kArray, kObject };

struct JsonMember;

// A tagged union on purpose: `type_` says which member is live, and every accessor documents the type it
// expects. std::variant would double the size of a value and of every container.
// NOLINTBEGIN(cppcoreguidelines-pro-type-union-access,cppcoreguidelines-pro-type-member-init)
class JsonValue {
 public:
  JsonValue() noexcept : integer_(0) {}

  [[nodiscard]] JsonType type() const noexcept { return type_; }
  [[nodiscard]] bool is_null() const noexcept { return type_ == JsonType::kNull; }
  [[nodiscard]] bool is_object() const noexcept { return type_ == JsonType::kObject; }
  [[nodiscard]] bool is_array() const noexcept { return type_ == JsonType::kArray; }
  [[nodiscard]] bool is_string() const noexcept { return type_ == JsonType::kString; }

  // Each accessor expects the matching type.
  [[nodiscard]] bool boolean() const noexcept { return boolean_; }
  [[nodiscard]] std::int64_t integer() const noexcept { return integer_; }
  [[nodiscard]] std::uint64_t unsigned_integer() const noexcept { return unsigned_; }
  [[nodiscard]] double floating() const noexcept { return floating_; }
  [[nodiscard]] std::string_view string() const noexcept { return {chars_, size_}; }
  [[nodiscard]] std::span<const JsonValue> items() const noexcept { return {items_, size_}; }
  [[nodiscard]] std::span<const JsonMember> members() const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const JsonValue& operator[](std::size_t i) const noexcept { return items_[i]; }

  // The member called `key` of an object (binary search), or nullptr (also when this is not an object).
  [[nodiscard]] const JsonValue* find(std::string_view key) const noexcept;

 private:
  friend class JsonBuilder;
  friend class JsonScanner;
  JsonType type_ = JsonType::kNull;
  std::uint32_t size_ = 0;  // characters, items or members
  union {
    bool boolean_;
    std::int64_t integer_;
    std::uint64_t unsigned_;
    double floating_;
    const char* chars_;
    const JsonValue* items_;
    const JsonMember* members_;
  };
};

struct JsonMember {
  std::string_view key;
  JsonValue value;
};

inline std::span<const JsonMember> JsonValue::members() const noexcept {
  return {members_, size_};
}
// NOLINTEND(cppcoreguidelines-pro-type-union-access,cppcoreguidelines-pro-type-member-init)

class JsonDocument {
 public:
  // Parses `text`, which must outlive the document: strings without escapes are views into it. Fails past
  // `max_depth` nested containers; members at the `drop` paths are checked for syntax and left out. The
  // accepted syntax and the values are those of nlohmann::json::parse (see json_reader.cpp and
  // json_scanner.cpp).
  static Result<JsonDocument> parse(std::string_view text, std::size_t max_depth,
                                    std::span<const JsonPath> drop = {});

  [[nodiscard]] const JsonValue& root() const noexcept { return root_; }

 private:
  friend class JsonBuilder;
  JsonValue root_;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;  // the arena: containers and unescaped strings
};

// parse_json's limits and drop paths, into a JsonDocument: the size is checked first of all.
Result<JsonDocument> parse_json_document(std::string_view text, const JsonLimits& limits = {},
                                         std::span<const JsonPath> drop = {});

// The same value as nlohmann::json, members in the same order.
nlohmann::json to_json(const JsonValue& value);

// Equality as nlohmann's operator== has it: numbers of different kinds compare by value (1 == 1.0).
bool same_json(const JsonValue& a, const JsonValue& b);

// A document with the text it views. Objects that arrive as nlohmann::json (the manifests `gpuadmit check`
// reads, the tests' objects) are printed and read into one, so the policy judges them from the same
// representation, by the same code, as a review's object.
class OwnedJsonDocument {
 public:
  static Result<OwnedJsonDocument> of(const nlohmann::json& value, std::size_t max_depth = 128);
  [[nodiscard]] const JsonValue& root() const noexcept { return document_.root(); }

 private:
  std::unique_ptr<const std::string> text_;  // on the heap: the document's strings view into it
  JsonDocument document_;
};

}  // namespace gpuadmit::k8s
