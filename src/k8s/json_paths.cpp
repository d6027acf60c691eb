#include "gpuadmit/k8s/json_paths.hpp"

#include <nlohmann/json.hpp>

namespace gpuadmit::k8s {

std::string text_at(const nlohmann::json& object, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return {};
    const auto it = at->find(key);
    if (it == at->end()) return {};
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

std::string controller_uid(const nlohmann::json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  const auto owners = meta->find("ownerReferences");
  if (owners == meta->end() || !owners->is_array()) return {};
  for (const nlohmann::json& owner : *owners) {
    if (owner.is_object() && owner.value("controller", false) && owner.contains("uid") &&
        owner["uid"].is_string())
      return owner["uid"].get<std::string>();
  }
  return {};
}

}  // namespace gpuadmit::k8s
