#include "json_diff.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

namespace gpuadmit::policy {
namespace {

using nlohmann::json;

// Both members are sorted maps: one merge walk pairs the keys (no lookups, and not nlohmann's items(),
// which copies two strings per step). Additions go last, as nlohmann orders them.
void diff_object(const json& source, const json& target, std::string& path, json& patch) {
  const auto& from = source.get_ref<const json::object_t&>();
  const auto& to = target.get_ref<const json::object_t&>();
  const std::size_t base = path.size();
  std::vector<const json::object_t::value_type*> added;
  auto t = to.begin();
  for (const auto& member : from) {
    while (t != to.end() && t->first < member.first) added.push_back(&*t++);
    append_pointer_token(path, member.first);
    if (t != to.end() && t->first == member.first) {
      append_diff(member.second, t->second, path, patch);
      ++t;
    } else {
      patch.push_back(patch_op("remove", path));
    }
    path.resize(base);
  }
  for (; t != to.end(); ++t) added.push_back(&*t);
  for (const auto* member : added) {
    append_pointer_token(path, member->first);
    patch.push_back(patch_op("add", path, member->second));
    path.resize(base);
  }
}

void diff_array(const json& source, const json& target, std::string& path, json& patch) {
  const std::size_t base = path.size();
  const std::size_t common = std::min(source.size(), target.size());
  for (std::size_t i = 0; i < common; ++i) {
    path += '/';
    path += std::to_string(i);
    append_diff(source[i], target[i], path, patch);
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

}  // namespace

// Members are placed straight into the object's map: an initializer list would build each pair as a
// JSON array first and then copy it (the value too), which was a third of the cost of a diff.
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

void append_pointer_token(std::string& path, std::string_view token) {
  path.push_back('/');
  for (const char c : token) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path.push_back(c);
    }
  }
}

void append_diff(const json& source, const json& target, std::string& path, json& patch) {
  if (source.type() != target.type()) {
    // 1 and 1.0 are different types but equal values: nothing to patch.
    if (source != target) patch.push_back(patch_op("replace", path, target));
    return;
  }
  if (source.is_object()) {
    diff_object(source, target, path, patch);
  } else if (source.is_array()) {
    diff_array(source, target, path, patch);
  } else if (source != target) {
    patch.push_back(patch_op("replace", path, target));
  }
}

json json_diff(const json& source, const json& target, std::string path) {
  json patch = json::array();
  append_diff(source, target, path, patch);
  return patch;
}

}  // namespace gpuadmit::policy
