#include "gpuadmit/cluster/discovery.hpp"

#include <algorithm>
#include <optional>

#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cluster {
namespace {

constexpr std::size_t kMaxDiscoveryBytes = 4U << 20U;

// GET `target` as a JSON object; nothing for a 404; an error otherwise.
Result<std::optional<nlohmann::json>> get_object(ApiTransport& transport, const std::string& target,
                                                 std::stop_token stop) {
  auto response = transport.get(target, std::move(stop));
  if (!response) return make_error("GET " + target + ": " + response.error().message);
  if (response->status == 404) return std::optional<nlohmann::json>();
  if (response->status != 200) {
    return make_error("GET " + target + ": HTTP " + std::to_string(response->status));
  }
  auto body = k8s::parse_json(response->body, {kMaxDiscoveryBytes, 64});
  if (!body || !body->is_object()) return make_error("GET " + target + ": not a JSON object");
  return std::optional<nlohmann::json>(std::move(*body));
}

}  // namespace

std::string ServedKind::path() const {
  return (api_version.find('/') == std::string::npos ? "/api/" : "/apis/") + api_version + "/" + resource;
}

std::string ServedKind::path_in(std::string_view ns) const {
  return (api_version.find('/') == std::string::npos ? "/api/" : "/apis/") + api_version + "/namespaces/" +
         std::string(ns) + "/" + resource;
}

Result<std::vector<ServedKind>> discover_kinds(ApiTransport& transport, std::string_view group,
                                               const std::vector<std::string>& kinds, std::stop_token stop) {
  std::string group_version = "v1";
  if (!group.empty()) {
    auto api_group = get_object(transport, "/apis/" + std::string(group), stop);
    if (!api_group) return api_group.error();
    if (!*api_group) return std::vector<ServedKind>{};
    const nlohmann::json& preferred = (**api_group)["preferredVersion"];
    if (!preferred.is_object() || !preferred.contains("groupVersion") ||
        !preferred["groupVersion"].is_string()) {
      return make_error("GET /apis/" + std::string(group) + ": no preferredVersion.groupVersion");
    }
    group_version = preferred["groupVersion"].get<std::string>();
  }
  const std::string target = (group.empty() ? "/api/" : "/apis/") + group_version;
  auto list = get_object(transport, target, stop);
  if (!list) return list.error();
  std::vector<ServedKind> out;
  if (!*list || !(**list)["resources"].is_array()) return out;
  for (const nlohmann::json& r : (**list)["resources"]) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("kind") ||
        !r["kind"].is_string()) {
      continue;
    }
    const std::string name = r["name"].get<std::string>();
    const std::string kind = r["kind"].get<std::string>();
    if (name.find('/') != std::string::npos) continue;  // a subresource: pods/status
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) continue;
    out.push_back({group_version, kind, name, r.value("namespaced", true)});
  }
  return out;
}

}  // namespace gpuadmit::cluster
