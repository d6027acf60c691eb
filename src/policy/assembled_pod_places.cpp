// Where what the rules find or fix on an assembled pod goes in the object it was assembled from.
#include <set>

#include "assembled_pod.hpp"
#include "gpuadmit/k8s/json_output.hpp"

namespace gpuadmit::policy {
namespace {

// The index at the start of `rest` ("1/resources" → 1, rest "/resources"), when there is one.
std::optional<std::size_t> leading_index(std::string_view& rest, char end) {
  std::size_t i = 0;
  std::size_t index = 0;
  while (i < rest.size() && i < 9 && rest[i] >= '0' && rest[i] <= '9') index = index * 10 + (rest[i++] - '0');
  if (i == 0 || (i < rest.size() && rest[i] != end)) return std::nullopt;
  rest.remove_prefix(i);
  return index;
}

// "/resources/limits" → "/computeResources/limits" (and the same with dots) when the containers keep their
// requests elsewhere.
std::string renamed(const AssembledPod& pod, std::string_view rest, char sep) {
  constexpr std::string_view kResources = "resources";
  if (rest.size() > kResources.size() && rest[0] == sep && rest.substr(1, kResources.size()) == kResources &&
      (rest.size() == kResources.size() + 1 || rest[kResources.size() + 1] == sep)) {
    return std::string(1, sep) + pod.resources + std::string(rest.substr(kResources.size() + 1));
  }
  return std::string(rest);
}

// The spec member a pod pointer or field starts with ("/spec/tolerations/0" → "tolerations").
std::string_view spec_member(std::string_view path, std::string_view prefix, std::string_view seps) {
  if (!path.starts_with(prefix)) return {};
  std::string_view rest = path.substr(prefix.size());
  return rest.substr(0, rest.find_first_of(seps));
}

}  // namespace

std::optional<std::string> site_pointer(const AssembledPod& pod, std::string_view pod_pointer) {
  constexpr std::string_view kContainer = "/spec/containers/";
  if (pod_pointer.starts_with(kContainer)) {
    std::string_view rest = pod_pointer.substr(kContainer.size());
    const auto index = leading_index(rest, '/');
    if (!index || *index >= pod.container_pointers.size()) return std::nullopt;
    return pod.container_pointers[*index] + renamed(pod, rest, '/');
  }
  if (pod_pointer == "/spec/containers" || pod_pointer == "/spec") return std::nullopt;
  if (pod_pointer.starts_with("/spec/initContainers"))
    return pod.site_pointer + std::string(pod_pointer.substr(5));
  if (pod_pointer.starts_with("/spec/"))
    return pod.sources.front().pointer + std::string(pod_pointer.substr(5));
  return std::nullopt;
}

std::string site_field(const AssembledPod& pod, std::string_view pod_field, bool written) {
  constexpr std::string_view kContainer = "spec.containers[";
  if (pod_field.starts_with(kContainer)) {
    std::string_view rest = pod_field.substr(kContainer.size());
    const auto index = leading_index(rest, ']');
    if (index && *index < pod.container_fields.size() && rest.starts_with("]")) {
      return pod.container_fields[*index] + renamed(pod, rest.substr(1), '.');
    }
  }
  const std::string& first = pod.sources.front().field;
  if (pod_field == "spec") return first;
  if (pod_field.starts_with("spec.initContainers")) return pod.site_field + std::string(pod_field.substr(4));
  if (pod_field.starts_with("spec.")) {
    // A finding about a member read from a later source names it there (the workflow's tolerations).
    const auto from = pod.member_source.find(std::string(spec_member(pod_field, "spec.", ".[")));
    const std::string& source =
        from != pod.member_source.end() && !written ? pod.sources[from->second].field : first;
    return source + std::string(pod_field.substr(4));
  }
  if (pod_field.starts_with("metadata")) {
    // Without a metadata source in the object, the pod's labels are the workload's own (a TaskRun's).
    return pod.metadata_target ? pod.metadata_target->field + std::string(pod_field.substr(8))
                               : std::string(pod_field);
  }
  return pod.site_field + (pod_field.empty() ? "" : ".") + std::string(pod_field);
}

namespace {

// A label or annotation edit, written to the first metadata source (created if missing; its labels or
// annotations map too, empty: Argo merges those key by key, so nothing needs to be copied first).
void place_metadata_op(const AssembledPod& pod, const std::string& path, nlohmann::json& op,
                       std::set<std::string>& seeded, nlohmann::json& patch) {
  const PodSource& target = *pod.metadata_target;
  if (seeded.insert("/metadata").second) {
    for (const std::string& missing : target.missing) {
      patch.push_back({{"op", "add"}, {"path", missing}, {"value", nlohmann::json::object()}});
    }
  }
  const std::string_view rest = std::string_view(path).substr(10);  // "/metadata/labels/x" → "labels/x"
  const std::string_view map = rest.substr(0, rest.find('/'));
  const bool into_map = map.size() < rest.size();
  const k8s::JsonValue* existing = target.value != nullptr ? target.value->find(map) : nullptr;
  if (into_map && (existing == nullptr || !existing->is_object()) &&
      seeded.insert("/metadata/" + std::string(map)).second) {
    patch.push_back({{"op", "add"},
                     {"path", target.pointer + "/" + std::string(map)},
                     {"value", nlohmann::json::object()}});
  }
  op["path"] = target.pointer + "/" + std::string(rest);
  patch.push_back(std::move(op));
}

}  // namespace

Result<Decision> placed_on_site(const AssembledPod& pod, Decision decision) {
  for (auto* list : {&decision.violations, &decision.warnings, &decision.audits}) {
    for (Finding& f : *list) f.field = site_field(pod, f.field);
  }
  for (Fix& f : decision.fixes) f.field = site_field(pod, f.field, true);
  nlohmann::json patch = nlohmann::json::array();
  bool created = false;
  std::set<std::string> seeded;
  const PodSource& first = pod.sources.front();
  for (nlohmann::json& op : decision.patch) {
    const std::string path = op.value("path", "");
    const auto placed = site_pointer(pod, path);
    if (!placed && path.starts_with("/metadata/") && pod.metadata_target) {
      place_metadata_op(pod, path, op, seeded, patch);
      continue;
    }
    if (!placed) {
      if (path.starts_with("/metadata")) continue;
      return make_error("internal: a fix to " + path +
                        " has no place in the object the pod is assembled from");
    }
    const std::string member(spec_member(path, "/spec/", "/"));
    const bool pod_level = !member.empty() && member != "containers" && member != "initContainers";
    if (pod_level && !created) {
      for (const std::string& missing : first.missing)
        patch.push_back({{"op", "add"}, {"path", missing}, {"value", nlohmann::json::object()}});
      created = true;
    }
    if (pod_level && member == "volumes") {
      const std::string_view rest = std::string_view(path).substr(std::string_view("/spec/volumes").size());
      std::string_view index = rest.empty() ? rest : rest.substr(1);
      if (!index.empty() && index != "-" &&
          leading_index(index, '/').value_or(pod.own_volumes) >= pod.own_volumes) {
        return make_error("internal: a fix to " + path + " edits a volume inherited from another source");
      }
      if (pod.own_volumes == 0 && !rest.empty() && seeded.insert(member).second) {
        patch.push_back(
            {{"op", "add"}, {"path", first.pointer + "/volumes"}, {"value", nlohmann::json::array()}});
      }
    } else if (pod_level) {
      const auto from = pod.member_source.find(member);
      if (from != pod.member_source.end() && from->second > 0 && seeded.insert(member).second) {
        patch.push_back(
            {{"op", "add"}, {"path", first.pointer + "/" + member}, {"value", pod.pod["spec"][member]}});
      }
    }
    op["path"] = *placed;
    patch.push_back(std::move(op));
  }
  decision.patch = std::move(patch);
  return decision;
}

}  // namespace gpuadmit::policy
