#include "assembled_pod.hpp"

#include "gpuadmit/k8s/json_output.hpp"

namespace gpuadmit::policy {
namespace {

void add_container(AssembledPod& out, nlohmann::json& containers, const k8s::JsonValue& container,
                   std::string pointer, std::string field, const std::string& member) {
  if (!container.is_object()) return;
  nlohmann::json c = k8s::to_json(container);
  if (!c.contains("name") || !c["name"].is_string()) c["name"] = member;
  containers.push_back(std::move(c));
  out.container_pointers.push_back(std::move(pointer));
  out.container_fields.push_back(std::move(field));
}

// The index at the start of `rest` ("1/resources" → 1, rest "/resources"), when there is one.
std::optional<std::size_t> leading_index(std::string_view& rest, char end) {
  std::size_t i = 0;
  std::size_t index = 0;
  while (i < rest.size() && i < 9 && rest[i] >= '0' && rest[i] <= '9') index = index * 10 + (rest[i++] - '0');
  if (i == 0 || (i < rest.size() && rest[i] != end && end != '/') ||
      (end == '/' && i < rest.size() && rest[i] != '/'))
    return std::nullopt;
  rest.remove_prefix(i);
  return index;
}

}  // namespace

AssembledPod assemble_pod(const k8s::JsonValue& spec, const WorkloadPod& source) {
  AssembledPod out;
  nlohmann::json pod_spec = k8s::to_json(spec);
  nlohmann::json containers = nlohmann::json::array();
  if (const k8s::JsonValue* own = spec.find("containers"); own != nullptr && own->is_array()) {
    for (std::size_t i = 0; i < own->items().size(); ++i) {
      add_container(out, containers, own->items()[i], "/containers/" + std::to_string(i),
                    "containers[" + std::to_string(i) + "]", "container");
    }
  }
  for (const FieldRef& ref : source.containers) {
    const k8s::JsonValue* node = &spec;
    std::string pointer;
    std::string field;
    for (const std::string& member : ref.members) {
      node = node->is_object() ? node->find(member) : nullptr;
      if (node == nullptr) break;
      k8s::append_pointer_token(pointer, member);
      field += (field.empty() ? "" : ".") + member;
    }
    if (node == nullptr || ref.members.empty()) continue;
    if (node->is_array()) {
      for (std::size_t i = 0; i < node->items().size(); ++i) {
        add_container(out, containers, node->items()[i], pointer + "/" + std::to_string(i),
                      field + "[" + std::to_string(i) + "]", ref.members.back());
      }
    } else {
      add_container(out, containers, *node, pointer, field, ref.members.back());
    }
  }
  pod_spec["containers"] = std::move(containers);
  out.pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", nlohmann::json::object()}, {"spec", pod_spec}};
  return out;
}

std::optional<std::string> site_pointer(const AssembledPod& pod, std::string_view pod_pointer) {
  constexpr std::string_view kContainer = "/spec/containers/";
  if (pod_pointer.starts_with(kContainer)) {
    std::string_view rest = pod_pointer.substr(kContainer.size());
    const auto index = leading_index(rest, '/');
    if (!index || *index >= pod.container_pointers.size()) return std::nullopt;
    return pod.container_pointers[*index] + std::string(rest);
  }
  if (pod_pointer == "/spec/containers") return std::nullopt;
  if (pod_pointer.starts_with("/spec/")) return std::string(pod_pointer.substr(5));
  return std::nullopt;
}

std::string site_field(const AssembledPod& pod, std::string_view pod_field) {
  constexpr std::string_view kContainer = "spec.containers[";
  if (pod_field.starts_with(kContainer)) {
    std::string_view rest = pod_field.substr(kContainer.size());
    const auto index = leading_index(rest, ']');
    if (index && *index < pod.container_fields.size() && rest.starts_with("]")) {
      return pod.container_fields[*index] + std::string(rest.substr(1));
    }
  }
  if (pod_field == "spec") return {};
  if (pod_field.starts_with("spec.")) return std::string(pod_field.substr(5));
  return std::string(pod_field);
}

Result<Decision> placed_on_site(const AssembledPod& pod, Decision decision) {
  for (auto* list : {&decision.violations, &decision.warnings, &decision.audits}) {
    for (Finding& f : *list) f.field = site_field(pod, f.field);
  }
  for (Fix& f : decision.fixes) f.field = site_field(pod, f.field);
  nlohmann::json patch = nlohmann::json::array();
  for (nlohmann::json& op : decision.patch) {
    const std::string path = op.value("path", "");
    if (auto placed = site_pointer(pod, path)) {
      op["path"] = *placed;
      patch.push_back(std::move(op));
    } else if (!path.starts_with("/metadata")) {
      return make_error("internal: a fix to " + path +
                        " has no place in the object the pod is assembled from");
    }
  }
  decision.patch = std::move(patch);
  return decision;
}

}  // namespace gpuadmit::policy
