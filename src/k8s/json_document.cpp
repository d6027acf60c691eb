#include <memory>
#include <string>

#include "gpuadmit/k8s/json_document.hpp"

namespace gpuadmit::k8s {

nlohmann::json to_json(const JsonValue& value) {
  using nlohmann::json;
  switch (value.type()) {
    case JsonType::kNull:
      return nullptr;
    case JsonType::kBoolean:
      return value.boolean();
    case JsonType::kInteger:
      return value.integer();
    case JsonType::kUnsigned:
      return value.unsigned_integer();
    case JsonType::kFloat:
      return value.floating();
    case JsonType::kString:
      return std::string(value.string());
    case JsonType::kArray: {
      json out(json::value_t::array);
      auto& items = out.get_ref<json::array_t&>();
      items.reserve(value.size());
      for (const JsonValue& item : value.items()) {
        items.push_back(to_json(item));
      }
      return out;
    }
    case JsonType::kObject: {
      json out(json::value_t::object);
      auto& members = out.get_ref<json::object_t&>();
      for (const JsonMember& member : value.members()) {
        members.emplace_hint(members.end(), member.key, to_json(member.value));
      }
      return out;
    }
  }
  return nullptr;
}

namespace {

bool is_number(JsonType type) {
  return type == JsonType::kInteger || type == JsonType::kUnsigned || type == JsonType::kFloat;
}

// Numbers of different kinds compare by value, as nlohmann's operator== has them.
bool same_number(const JsonValue& a, const JsonValue& b) {
  if (a.type() == b.type()) {
    switch (a.type()) {
      case JsonType::kInteger:
        return a.integer() == b.integer();
      case JsonType::kUnsigned:
        return a.unsigned_integer() == b.unsigned_integer();
      default:
        return a.floating() == b.floating();
    }
  }
  return to_json(a) == to_json(b);
}

}  // namespace

bool same_json(const JsonValue& a, const JsonValue& b) {
  if (is_number(a.type()) && is_number(b.type())) return same_number(a, b);
  if (a.type() != b.type()) return false;
  if ((a.is_array() || a.is_object()) && a.size() != b.size()) return false;
  switch (a.type()) {
    case JsonType::kNull:
      return true;
    case JsonType::kBoolean:
      return a.boolean() == b.boolean();
    case JsonType::kString:
      return a.string() == b.string();
    case JsonType::kArray:
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!same_json(a[i], b[i])) return false;
      }
      return true;
    case JsonType::kObject:
      // Members are sorted by key in both.
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a.members()[i].key != b.members()[i].key ||
            !same_json(a.members()[i].value, b.members()[i].value))
          return false;
      }
      return true;
    default:
      return false;
  }
}

Result<OwnedJsonDocument> OwnedJsonDocument::of(const nlohmann::json& value, std::size_t max_depth) {
  OwnedJsonDocument out;
  out.text_ = std::make_unique<const std::string>(value.dump());
  auto document = JsonDocument::parse(*out.text_, max_depth);
  if (!document) return document.error();
  out.document_ = std::move(*document);
  return out;
}

}  // namespace gpuadmit::k8s
