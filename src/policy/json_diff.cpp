#include "json_diff.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

namespace gpuadmit::policy {
namespace {

using nlohmann::json;

json op(const char* name, const std::string& path) {
  return json{{"op", name}, {"path", path}};
}

json op(const char* name, const std::string& path, const json& value) {
  return json{{"op", name}, {"path", path}, {"value", value}};
}

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
      patch.push_back(op("remove", path));
    }
    path.resize(base);
  }
  for (; t != to.end(); ++t) added.push_back(&*t);
  for (const auto* member : added) {
    append_pointer_token(path, member->first);
    patch.push_back(op("add", path, member->second));
    path.resize(base);
  }
}

void diff_array(const json& source, const json& target, std::string& path, json& patch) {
  const std::size_t base = path.size();
  const std::size_t common = std::min(source.size(), target.size());
  for (std::size_t i = 0; i < common; ++i) {
    path += '/' + std::to_string(i);
    append_diff(source[i], target[i], path, patch);
    path.resize(base);
  }
  // Remove from the end so earlier indices stay valid while the patch applies.
  for (std::size_t i = source.size(); i > common; --i) {
    path += '/' + std::to_string(i - 1);
    patch.push_back(op("remove", path));
    path.resize(base);
  }
  for (std::size_t i = common; i < target.size(); ++i) {
    path += "/-";
    patch.push_back(op("add", path, target[i]));
    path.resize(base);
  }
}

}  // namespace

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
    if (source != target) patch.push_back(op("replace", path, target));
    return;
  }
  if (source.is_object()) {
    diff_object(source, target, path, patch);
  } else if (source.is_array()) {
    diff_array(source, target, path, patch);
  } else if (source != target) {
    patch.push_back(op("replace", path, target));
  }
}

json json_diff(const json& source, const json& target, std::string path) {
  json patch = json::array();
  append_diff(source, target, path, patch);
  return patch;
}

}  // namespace gpuadmit::policy
