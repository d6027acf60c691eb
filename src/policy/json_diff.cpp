#include "json_diff.hpp"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"

namespace gpuadmit::policy {
namespace {

using nlohmann::json;

// Whether the two hold the same kind of value, as nlohmann's value_t tells them apart.
bool same_type(const json& source, const json& target) {
  return source.type() == target.type();
}
bool same_type(const k8s::JsonValue& source, const json& target) {
  switch (source.type()) {
    case k8s::JsonType::kNull:
      return target.is_null();
    case k8s::JsonType::kBoolean:
      return target.is_boolean();
    case k8s::JsonType::kInteger:
      return target.type() == json::value_t::number_integer;
    case k8s::JsonType::kUnsigned:
      return target.type() == json::value_t::number_unsigned;
    case k8s::JsonType::kFloat:
      return target.type() == json::value_t::number_float;
    case k8s::JsonType::kString:
      return target.is_string();
    case k8s::JsonType::kArray:
      return target.is_array();
    case k8s::JsonType::kObject:
      return target.is_object();
  }
  return false;
}

// Equality as nlohmann's operator== has it (1 == 1u == 1.0); used for leaves and for values of different
// types, so converting a document value here is cheap or rare.
bool equal(const json& source, const json& target) {
  return source == target;
}
bool equal(const k8s::JsonValue& source, const json& target) {
  if (source.is_string() && target.is_string())
    return source.string() == target.get_ref<const std::string&>();
  return k8s::to_json(source) == target;
}

template <class J>
void diff(const J& source, const json& target, std::string& path, json& patch);

// Both members are sorted maps: one merge walk pairs the keys (no lookups, and not nlohmann's items(),
// which copies two strings per step). Additions go last, as nlohmann orders them.
template <class J>
void diff_object(const J& source, const json& target, std::string& path, json& patch) {
  const auto& to = target.get_ref<const json::object_t&>();
  const std::size_t base = path.size();
  std::vector<const json::object_t::value_type*> added;
  auto t = to.begin();
  for (const auto& [key, value] : k8s::entries(source)) {
    while (t != to.end() && t->first < key) added.push_back(&*t++);
    k8s::append_pointer_token(path, key);
    if (t != to.end() && t->first == key) {
      diff(value, t->second, path, patch);
      ++t;
    } else {
      patch.push_back(patch_op("remove", path));
    }
    path.resize(base);
  }
  for (; t != to.end(); ++t) added.push_back(&*t);
  for (const auto* member : added) {
    k8s::append_pointer_token(path, member->first);
    patch.push_back(patch_op("add", path, member->second));
    path.resize(base);
  }
}

template <class J>
void diff_array(const J& source, const json& target, std::string& path, json& patch) {
  const std::size_t base = path.size();
  const std::size_t common = std::min(source.size(), target.size());
  for (std::size_t i = 0; i < common; ++i) {
    path += '/';
    path += std::to_string(i);
    diff(source[i], target[i], path, patch);
    path.resize(base);
  }
  // Remove from the end so earlier indices stay valid while the patch applies.
  for (std::size_t i = source.size(); i > common; --i) {
    path += '/' + std::to_string(i - 1);
    patch.push_back(patch_op("remove", path));
    path.resize(base);
  }
  for (std::size_t i = common; i < target.size(); ++i) {
    path += "/-";
    patch.push_back(patch_op("add", path, target[i]));
    path.resize(base);
  }
}

template <class J>
void diff(const J& source, const json& target, std::string& path, json& patch) {
  if (!same_type(source, target)) {
    // 1 and 1.0 are different types but equal values: nothing to patch.
    if (!equal(source, target)) patch.push_back(patch_op("replace", path, target));
    return;
  }
  if (source.is_object()) {
    diff_object(source, target, path, patch);
  } else if (source.is_array()) {
    diff_array(source, target, path, patch);
  } else if (!equal(source, target)) {
    patch.push_back(patch_op("replace", path, target));
  }
}

}  // namespace

// Members are placed straight into the object's map: an initializer list would build each pair as a
// JSON array first and then copy it (the value too), for every operation of every patch.
json patch_op(const char* name, const std::string& path) {
  json out(json::value_t::object);
  auto& members = out.get_ref<json::object_t&>();
  members.emplace_hint(members.end(), "op", name);
  members.emplace_hint(members.end(), "path", path);
  return out;
}

json patch_op(const char* name, const std::string& path, const json& value) {
  json out = patch_op(name, path);
  out.get_ref<json::object_t&>().emplace_hint(out.get_ref<json::object_t&>().end(), "value", value);
  return out;
}

void append_diff(const json& source, const json& target, std::string& path, json& patch) {
  diff(source, target, path, patch);
}

void append_diff(const k8s::JsonValue& source, const json& target, std::string& path, json& patch) {
  diff(source, target, path, patch);
}

json json_diff(const json& source, const json& target, std::string path) {
  json patch = json::array();
  append_diff(source, target, path, patch);
  return patch;
}

}  // namespace gpuadmit::policy
