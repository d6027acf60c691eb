// Reading nlohmann::json (what the CLI and the tests hold) and JsonDocument values (what a review is
// parsed into) with one vocabulary, so a walk written once as a template reads both: these overloads are
// the only places the two differ. Members of both come sorted by key.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/json_document.hpp"

namespace gpuadmit::k8s {

inline const char* type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "a list";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::null:
      return "null";
    default:
      return "a number";
  }
}

inline const char* type_name(const JsonValue& value) {
  switch (value.type()) {
    case JsonType::kObject:
      return "an object";
    case JsonType::kArray:
      return "a list";
    case JsonType::kString:
      return "a string";
    case JsonType::kBoolean:
      return "a boolean";
    case JsonType::kNull:
      return "null";
    default:
      return "a number";
  }
}

inline const nlohmann::json* lookup(const nlohmann::json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}
inline const JsonValue* lookup(const JsonValue& object, std::string_view key) {
  return object.find(key);
}

inline std::string_view text(const nlohmann::json& value) {
  return value.get_ref<const std::string&>();
}
inline std::string_view text(const JsonValue& value) {
  return value.string();
}

inline const nlohmann::json::object_t& entries(const nlohmann::json& object) {
  return object.get_ref<const nlohmann::json::object_t&>();
}
inline std::span<const JsonMember> entries(const JsonValue& object) {
  return object.members();
}

inline bool is_number(const nlohmann::json& value) {
  return value.is_number();
}
inline bool is_number(const JsonValue& value) {
  return value.type() == JsonType::kInteger || value.type() == JsonType::kUnsigned ||
         value.type() == JsonType::kFloat;
}
inline bool is_integer(const nlohmann::json& value) {
  return value.is_number_integer();
}
inline bool is_integer(const JsonValue& value) {
  return value.type() == JsonType::kInteger || value.type() == JsonType::kUnsigned;
}
inline bool is_boolean(const nlohmann::json& value) {
  return value.is_boolean();
}
inline bool is_boolean(const JsonValue& value) {
  return value.type() == JsonType::kBoolean;
}

inline std::int64_t integer(const nlohmann::json& value) {
  return value.get<std::int64_t>();
}
inline std::int64_t integer(const JsonValue& value) {
  return value.type() == JsonType::kInteger ? value.integer()
                                            : static_cast<std::int64_t>(value.unsigned_integer());
}
inline bool boolean(const nlohmann::json& value) {
  return value.get<bool>();
}
inline bool boolean(const JsonValue& value) {
  return value.boolean();
}

// A number as JSON prints it (the API server accepts numeric quantities).
inline std::string number_text(const nlohmann::json& value) {
  return value.dump();
}
inline std::string number_text(const JsonValue& value) {
  return to_json(value).dump();
}

// A string member of an object, or "" when the object is not one, or the member is absent or not a string.
template <class J>
std::string_view string_member(const J& object, std::string_view key) {
  if (!object.is_object()) return {};
  const J* value = lookup(object, key);
  return value != nullptr && value->is_string() ? text(*value) : std::string_view();
}

}  // namespace gpuadmit::k8s
