#include "gpuadmit/k8s/pod_parser.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <utility>

#include "field_readers.hpp"

namespace gpuadmit::k8s {
namespace fields {
namespace {

using nlohmann::json;

template <class J>
// `first`: the list's index of the first item given (items appended to a list are read on their own).
std::vector<VolumeMount> volume_mounts(const J* mounts, const Path& path, std::size_t first = 0) {
  std::vector<VolumeMount> out;
  if (mounts == nullptr) return out;
  out.reserve(mounts->size());
  for (std::size_t i = 0; i < mounts->size(); ++i) {
    const Path p = path[first + i];
    out.push_back({string_at((*mounts)[i], "name", p), string_at((*mounts)[i], "mountPath", p)});
  }
  return out;
}

// No rule reads env, but a fix may add to it (presets): its entries are checked as parse_pod checks every
// field it reads, without keeping a copy.
template <class J>
void check_env(const J* env, const Path& path) {
  if (env == nullptr) return;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const Path p = path[i];
    const J* name = member((*env)[i], "name", p);
    if (name != nullptr && !name->is_string()) fail(p / "name", "a string", *name);
  }
}

Container container(const JsonValue& object, ContainerKind kind, std::size_t index, const Path& path) {
  Container c;
  c.kind = kind;
  c.index = index;
  c.name = string_at(object, "name", path);
  c.image = string_at(object, "image", path);
  if (kind == ContainerKind::kInit && string_at(object, "restartPolicy", path) == "Always") {
    c.kind = ContainerKind::kSidecar;
  }
  c.resources = requirements(object_at(object, "resources", path), path / "resources");
  c.volume_mounts = volume_mounts(array_at(object, "volumeMounts", path), path / "volumeMounts");
  c.command = string_list(array_at(object, "command", path), path / "command");
  c.args = string_list(array_at(object, "args", path), path / "args");
  check_env(array_at(object, "env", path), path / "env");
  return c;
}

template <class J>
void parse_affinity(const J* affinity, const Path& affinity_path, Pod& pod) {
  pod.has_required_affinity = false;
  pod.required_node_terms.clear();
  if (affinity == nullptr) return;
  const J* node_affinity = object_at(*affinity, "nodeAffinity", affinity_path);
  if (node_affinity == nullptr) return;
  const Path node_path = affinity_path / "nodeAffinity";
  const J* required = object_at(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", node_path);
  if (required == nullptr) return;
  const Path required_path = node_path / "requiredDuringSchedulingIgnoredDuringExecution";
  pod.has_required_affinity = true;
  pod.required_node_terms = node_selector_terms(array_at(*required, "nodeSelectorTerms", required_path),
                                                required_path / "nodeSelectorTerms");
}

template <class J>
std::vector<Volume> parse_volumes(const J* volumes, const Path& volumes_path, std::size_t first = 0) {
  std::vector<Volume> out;
  if (volumes == nullptr) return out;
  out.reserve(volumes->size());
  for (std::size_t i = 0; i < volumes->size(); ++i) {
    const Path p = volumes_path[first + i];
    const J& v = (*volumes)[i];
    Volume volume;
    volume.name = string_at(v, "name", p);
    if (const J* empty_dir = object_at(v, "emptyDir", p)) {
      volume.empty_dir = true;
      volume.medium = string_at(*empty_dir, "medium", p / "emptyDir");
      if (const J* limit = member(*empty_dir, "sizeLimit", p / "emptyDir")) {
        volume.size_limit = quantity(*limit, p / "emptyDir" / "sizeLimit");
      }
    }
    if (const J* host_path = object_at(v, "hostPath", p)) {
      volume.host_path = string_at(*host_path, "path", p / "hostPath");
    }
    if (const J* claim = object_at(v, "persistentVolumeClaim", p)) {
      volume.claim_name = string_at(*claim, "claimName", p / "persistentVolumeClaim");
    }
    if (const J* ephemeral = object_at(v, "ephemeral", p)) {
      volume.ephemeral = true;
      const Path template_path = p / "ephemeral" / "volumeClaimTemplate";
      if (const J* claim_template = object_at(*ephemeral, "volumeClaimTemplate", p / "ephemeral")) {
        if (const J* spec = object_at(*claim_template, "spec", template_path)) {
          if (const J* sc = member(*spec, "storageClassName", template_path / "spec")) {
            if (!sc->is_string()) fail(template_path / "spec" / "storageClassName", "a string", *sc);
            volume.ephemeral_storage_class = std::string(text(*sc));
          }
        }
      }
    }
    out.push_back(std::move(volume));
  }
  return out;
}

std::vector<PodResourceClaim> parse_resource_claims(const JsonValue* claims, const Path& path) {
  std::vector<PodResourceClaim> out;
  if (claims == nullptr) return out;
  out.reserve(claims->size());
  for (std::size_t i = 0; i < claims->size(); ++i) {
    const Path p = path[i];
    const JsonValue& claim = (*claims)[i];
    if (!claim.is_object()) fail(p, "an object", claim);
    out.push_back({string_at(claim, "name", p), string_at(claim, "resourceClaimName", p),
                   string_at(claim, "resourceClaimTemplateName", p)});
  }
  return out;
}

// A whole pod is read from a document only (parse_pod of nlohmann::json reads it into one first).
Pod parse_pod_or_throw(const JsonValue& object) {
  const Path root;
  if (!object.is_object()) fail(root / "object", "an object", object);
  Pod pod;
  pod.meta = parse_meta(object, root);
  const JsonValue* spec = object_at(object, "spec", root);
  if (spec == nullptr) throw FieldError{"spec: missing (a pod needs a spec with containers)", ""};
  const Path spec_path = root / "spec";
  const JsonValue* init = array_at(*spec, "initContainers", spec_path);
  const JsonValue* app = array_at(*spec, "containers", spec_path);
  pod.containers.reserve((init != nullptr ? init->size() : 0) + (app != nullptr ? app->size() : 0));
  if (init != nullptr) {
    for (std::size_t i = 0; i < init->size(); ++i) {
      pod.containers.push_back(
          container((*init)[i], ContainerKind::kInit, i, (spec_path / "initContainers")[i]));
    }
  }
  if (app != nullptr) {
    for (std::size_t i = 0; i < app->size(); ++i) {
      pod.containers.push_back(
          container((*app)[i], ContainerKind::kRegular, i, (spec_path / "containers")[i]));
    }
  }
  pod.node_selector = string_map(object_at(*spec, "nodeSelector", spec_path), spec_path / "nodeSelector");
  pod.node_name = string_at(*spec, "nodeName", spec_path);
  pod.priority_class_name = string_at(*spec, "priorityClassName", spec_path);
  if (const JsonValue* deadline = member(*spec, "activeDeadlineSeconds", spec_path)) {
    if (!is_integer(*deadline)) fail(spec_path / "activeDeadlineSeconds", "an integer", *deadline);
    pod.has_active_deadline = true;
  }
  if (const JsonValue* resources = object_at(*spec, "resources", spec_path)) {
    pod.pod_resources = requirements(resources, spec_path / "resources");
  }
  parse_affinity(object_at(*spec, "affinity", spec_path), spec_path / "affinity", pod);
  pod.tolerations = parse_tolerations(array_at(*spec, "tolerations", spec_path), spec_path / "tolerations");
  pod.volumes = parse_volumes(array_at(*spec, "volumes", spec_path), spec_path / "volumes");
  pod.resource_claims =
      parse_resource_claims(array_at(*spec, "resourceClaims", spec_path), spec_path / "resourceClaims");
  return pod;
}

// The container a part belongs to, or nullptr.
Container* container_of(Pod& pod, const PodPart& part) {
  const auto c = std::find_if(pod.containers.begin(), pod.containers.end(), [&](const Container& x) {
    return x.index == part.index && x.array_name() == part.array;
  });
  return c != pod.containers.end() ? &*c : nullptr;
}

Error not_read_back(const Path& path) {
  return make_error("internal: " + path.str() + " is not a part of a pod that gpuadmit reads back");
}

Result<bool> read_container_part(const PodPart& part, const json& value, const Path& scope_path, Pod& pod) {
  Container* c = container_of(pod, part);
  const Path array_path = scope_path / part.array;
  const Path container_path = array_path[part.index];
  if (c == nullptr) return make_error("internal: the pod has no " + container_path.str());
  const Path member_path = container_path / part.member;
  if (part.member == "resources") {
    c->resources = requirements(as_object(value, member_path), member_path);
  } else if (part.member == "env") {
    check_env(as_array(value, member_path), member_path);
  } else if (part.member == "volumeMounts") {
    c->volume_mounts = volume_mounts(as_array(value, member_path), member_path);
  } else {
    return not_read_back(member_path);
  }
  return true;
}

Result<bool> read_spec_part(const PodPart& part, const json& value, const Path& path, Pod& pod) {
  if (part.member == "resources") {
    const json* resources = as_object(value, path);
    pod.pod_resources = resources == nullptr ? std::nullopt : std::optional(requirements(resources, path));
  } else if (part.member == "affinity") {
    parse_affinity(as_object(value, path), path, pod);
  } else if (part.member == "tolerations") {
    pod.tolerations = parse_tolerations(as_array(value, path), path);
  } else if (part.member == "volumes") {
    pod.volumes = parse_volumes(as_array(value, path), path);
  } else if (part.member == "nodeSelector") {
    pod.node_selector = string_map(as_object(value, path), path);
  } else {
    return not_read_back(path);
  }
  return true;
}

Result<bool> read_metadata_part(const PodPart& part, const json& value, const Path& path, Pod& pod) {
  if (part.member == "annotations") {
    pod.meta.annotations = string_map(as_object(value, path), path);
  } else if (part.member == "labels") {
    pod.meta.labels = string_map(as_object(value, path), path);
  } else {
    return not_read_back(path);
  }
  return true;
}

Result<bool> read_pod_part(const PodPart& part, const json& value, Pod& pod) {
  const Path root;
  const Path scope_path = root / (part.scope == PodPart::Scope::kMetadata ? "metadata" : "spec");
  const Path path = scope_path / part.member;
  switch (part.scope) {
    case PodPart::Scope::kContainer:
      return read_container_part(part, value, scope_path, pod);
    case PodPart::Scope::kSpec:
      return read_spec_part(part, value, path, pod);
    case PodPart::Scope::kMetadata:
      return read_metadata_part(part, value, path, pod);
  }
  return not_read_back(path);
}

// Reads `items` with `parse` (given the list's path and the index of the first item) onto the end of `list`.
template <class T, class Parse>
void append_items(std::vector<T>& list, const json& items, const Path& path, const Parse& parse) {
  std::vector<T> read = parse(&items, path, list.size());
  list.insert(list.end(), std::make_move_iterator(read.begin()), std::make_move_iterator(read.end()));
}

Result<bool> read_pod_part_items(const PodPart& part, const json& items, Pod& pod) {
  const Path root;
  const Path scope_path = root / (part.scope == PodPart::Scope::kMetadata ? "metadata" : "spec");
  if (!items.is_array())
    return make_error("internal: appended items of " + scope_path.str() + " are not a list");
  if (part.scope == PodPart::Scope::kContainer && part.member == "volumeMounts") {
    const Path container_path = (scope_path / part.array)[part.index];
    Container* c = container_of(pod, part);
    if (c == nullptr) return make_error("internal: the pod has no " + container_path.str());
    append_items(c->volume_mounts, items, container_path / part.member, volume_mounts<json>);
    return true;
  }
  const Path path = scope_path / part.member;
  if (part.scope == PodPart::Scope::kSpec && part.member == "tolerations") {
    append_items(pod.tolerations, items, path, parse_tolerations<json>);
    return true;
  }
  if (part.scope == PodPart::Scope::kSpec && part.member == "volumes") {
    append_items(pod.volumes, items, path, parse_volumes<json>);
    return true;
  }
  return make_error("internal: " + path.str() + " is not a list of a pod that gpuadmit appends to");
}

}  // namespace
}  // namespace fields

Result<Pod> parse_pod(const nlohmann::json& object) {
  auto document = OwnedJsonDocument::of(object);
  if (!document) return document.error();
  return parse_pod(document->root());
}

Result<Pod> parse_pod(const JsonValue& object) {
  return fields::guarded<Pod>([&] { return fields::parse_pod_or_throw(object); });
}

Result<bool> parse_pod_part(const PodPart& part, const nlohmann::json& value, Pod& pod) {
  return fields::guarded<bool>([&] { return fields::read_pod_part(part, value, pod); });
}

Result<bool> parse_pod_part_items(const PodPart& part, const nlohmann::json& items, Pod& pod) {
  return fields::guarded<bool>([&] { return fields::read_pod_part_items(part, items, pod); });
}

std::string display_name(const ObjectMeta& meta) {
  if (!meta.name.empty()) return meta.name;
  if (!meta.generate_name.empty()) return meta.generate_name + "*";
  return "<unnamed>";
}

}  // namespace gpuadmit::k8s
