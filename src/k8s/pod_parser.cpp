#include "gpuadmit/k8s/pod_parser.hpp"

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/json_access.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace gpuadmit::k8s {
namespace {

using nlohmann::json;

// Internal only: thrown deep inside the walk and turned into a Result at the public functions below.
struct FieldError {
  std::string message;
};

// A field path built on the stack and rendered only when an error needs it: parsing a pod must not pay for
// strings nobody reads (it runs after every mutation on the request path). A Path points at its parent:
// a path kept in a variable must be built from named paths, never from a temporary.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  std::size_t index = std::string_view::npos;

  [[nodiscard]] Path operator/(std::string_view child) const { return Path{this, child}; }
  [[nodiscard]] Path operator[](std::size_t i) const { return Path{this, {}, i}; }

  [[nodiscard]] std::string str() const {
    std::string out = parent != nullptr ? parent->str() : std::string();
    if (index != std::string_view::npos) return out + "[" + std::to_string(index) + "]";
    if (!out.empty() && !key.empty()) out += '.';
    out += key;
    return out;
  }
};

template <class J>
[[noreturn]] void fail(const Path& path, const char* expected, const J& got) {
  throw FieldError{path.str() + ": expected " + expected + ", got " + type_name(got)};
}

// Returns the member or nullptr when absent or null (Kubernetes treats both as unset).
template <class J>
const J* member(const J& object, std::string_view key, const Path& path) {
  if (!object.is_object()) fail(path, "an object", object);
  const J* value = lookup(object, key);
  if (value == nullptr || value->is_null()) return nullptr;
  return value;
}

template <class J>
std::string string_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value == nullptr) return {};
  if (!value->is_string()) fail(path / key, "a string", *value);
  return std::string(text(*value));
}

template <class J>
const J* object_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value != nullptr && !value->is_object()) fail(path / key, "an object", *value);
  return value;
}

template <class J>
const J* array_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value != nullptr && !value->is_array()) fail(path / key, "a list", *value);
  return value;
}

// A part's value read on its own (parse_pod_part): null is absent, like a null member.
template <class J>
const J* as_object(const J& value, const Path& path) {
  if (value.is_null()) return nullptr;
  if (!value.is_object()) fail(path, "an object", value);
  return &value;
}

template <class J>
const J* as_array(const J& value, const Path& path) {
  if (value.is_null()) return nullptr;
  if (!value.is_array()) fail(path, "a list", value);
  return &value;
}

template <class J>
StringMap string_map(const J* object, const Path& path) {
  StringMap out;
  if (object == nullptr) return out;
  // Walks the map itself: nlohmann's items() copies two strings per step, and this runs per re-parse.
  out.reserve(object->size());
  for (const auto& [key, value] : entries(*object)) {
    if (!value.is_string()) fail(path / key, "a string", value);
    out.append(key, std::string(text(value)));  // members come sorted
  }
  return out;
}

template <class J>
std::vector<std::string> string_list(const J* list, const Path& path) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) fail(path[i], "a string", (*list)[i]);
    out.emplace_back(text((*list)[i]));
  }
  return out;
}

template <class J>
Quantity quantity(const J& value, const Path& path) {
  // The API server accepts numbers too (Quantity.UnmarshalJSON); users' YAML often has them.
  Result<Quantity> parsed = make_error("");
  if (value.is_string()) {
    parsed = Quantity::parse(text(value));
  } else if (is_number(value)) {
    parsed = Quantity::parse(number_text(value));
  } else {
    fail(path, R"(a quantity such as "2" or "16Gi")", value);
  }
  if (!parsed) throw FieldError{path.str() + ": " + parsed.error().message};
  return *parsed;
}

template <class J>
ResourceList resource_list(const J* list, const Path& path) {
  ResourceList out;
  if (list == nullptr) return out;
  if (!list->is_object()) fail(path, "an object", *list);
  out.reserve(list->size());
  for (const auto& [name, value] : entries(*list)) {
    out.append(name, quantity(value, path / name));  // members come sorted
  }
  return out;
}

template <class J>
ResourceRequirements requirements(const J* resources, const Path& path) {
  ResourceRequirements out;
  if (resources == nullptr) return out;
  out.requests = resource_list(object_at(*resources, "requests", path), path / "requests");
  out.limits = resource_list(object_at(*resources, "limits", path), path / "limits");
  return out;
}

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

template <class J>
Container container(const J& object, ContainerKind kind, std::size_t index, const Path& path) {
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
std::vector<NodeSelectorRequirement> requirements_list(const J* list, const Path& path) {
  std::vector<NodeSelectorRequirement> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Path p = path[i];
    NodeSelectorRequirement r{string_at((*list)[i], "key", p), string_at((*list)[i], "operator", p), {}};
    r.values = string_list(array_at((*list)[i], "values", p), p / "values");
    out.push_back(std::move(r));
  }
  return out;
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
  if (const J* terms = array_at(*required, "nodeSelectorTerms", required_path)) {
    for (std::size_t i = 0; i < terms->size(); ++i) {
      const Path node_selector_terms_path = required_path / "nodeSelectorTerms";
      const Path p = node_selector_terms_path[i];
      pod.required_node_terms.push_back(
          {requirements_list(array_at((*terms)[i], "matchExpressions", p), p / "matchExpressions"),
           requirements_list(array_at((*terms)[i], "matchFields", p), p / "matchFields")});
    }
  }
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

template <class J>
std::vector<Toleration> parse_tolerations(const J* tolerations, const Path& tolerations_path,
                                          std::size_t first = 0) {
  std::vector<Toleration> out;
  if (tolerations == nullptr) return out;
  out.reserve(tolerations->size());
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const Path p = tolerations_path[first + i];
    const J& t = (*tolerations)[i];
    Toleration toleration{string_at(t, "key", p), string_at(t, "operator", p), string_at(t, "value", p),
                          string_at(t, "effect", p), std::nullopt};
    if (const J* seconds = member(t, "tolerationSeconds", p)) {
      if (!is_integer(*seconds)) fail(p / "tolerationSeconds", "an integer", *seconds);
      toleration.toleration_seconds = integer(*seconds);
    }
    out.push_back(std::move(toleration));
  }
  return out;
}

template <class J>
ObjectMeta parse_meta(const J& object, const Path& root) {
  ObjectMeta meta;
  if (const J* m = object_at(object, "metadata", root)) {
    const Path p = root / "metadata";
    meta.name = string_at(*m, "name", p);
    meta.generate_name = string_at(*m, "generateName", p);
    meta.namespace_ = string_at(*m, "namespace", p);
    meta.labels = string_map(object_at(*m, "labels", p), p / "labels");
    meta.annotations = string_map(object_at(*m, "annotations", p), p / "annotations");
    if (const J* owners = array_at(*m, "ownerReferences", p)) {
      for (std::size_t i = 0; i < owners->size(); ++i) {
        const Path owner_path = (p / "ownerReferences")[i];
        const J& owner = (*owners)[i];
        const std::string kind = string_at(owner, "kind", owner_path);
        const J* controller = member(owner, "controller", owner_path);
        if (controller == nullptr) continue;
        if (!is_boolean(*controller)) fail(owner_path / "controller", "a boolean", *controller);
        if (boolean(*controller)) meta.controller_kind = kind;
      }
    }
  }
  return meta;
}

template <class J>
Pod parse_pod_or_throw(const J& object) {
  const Path root;
  if (!object.is_object()) fail(root / "object", "an object", object);
  Pod pod;
  pod.meta = parse_meta(object, root);
  const J* spec = object_at(object, "spec", root);
  if (spec == nullptr) throw FieldError{"spec: missing (a pod needs a spec with containers)"};
  const Path spec_path = root / "spec";
  const J* init = array_at(*spec, "initContainers", spec_path);
  const J* app = array_at(*spec, "containers", spec_path);
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
  if (const J* deadline = member(*spec, "activeDeadlineSeconds", spec_path)) {
    if (!is_integer(*deadline)) fail(spec_path / "activeDeadlineSeconds", "an integer", *deadline);
    pod.has_active_deadline = true;
  }
  if (const J* resources = object_at(*spec, "resources", spec_path)) {
    pod.pod_resources = requirements(resources, spec_path / "resources");
  }
  parse_affinity(object_at(*spec, "affinity", spec_path), spec_path / "affinity", pod);
  pod.tolerations = parse_tolerations(array_at(*spec, "tolerations", spec_path), spec_path / "tolerations");
  pod.volumes = parse_volumes(array_at(*spec, "volumes", spec_path), spec_path / "volumes");
  return pod;
}

template <class J>
Node parse_node_or_throw(const J& object) {
  const Path root;
  if (!object.is_object()) fail(root / "node", "an object", object);
  Node node;
  const ObjectMeta meta = parse_meta(object, root);
  node.name = meta.name;
  node.labels = meta.labels;
  if (const J* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const J* unschedulable = member(*spec, "unschedulable", spec_path)) {
      if (!is_boolean(*unschedulable)) fail(spec_path / "unschedulable", "a boolean", *unschedulable);
      node.unschedulable = boolean(*unschedulable);
    }
    if (const J* taints = array_at(*spec, "taints", spec_path)) {
      for (std::size_t i = 0; i < taints->size(); ++i) {
        const Path taints_path = spec_path / "taints";
        const Path p = taints_path[i];
        node.taints.push_back({string_at((*taints)[i], "key", p), string_at((*taints)[i], "value", p),
                               string_at((*taints)[i], "effect", p)});
      }
    }
  }
  if (const J* status = object_at(object, "status", root)) {
    const Path status_path = root / "status";
    node.allocatable =
        resource_list(object_at(*status, "allocatable", status_path), status_path / "allocatable");
    if (const J* conditions = array_at(*status, "conditions", status_path)) {
      for (std::size_t i = 0; i < conditions->size(); ++i) {
        const Path conditions_path = status_path / "conditions";
        const Path p = conditions_path[i];
        if (string_at((*conditions)[i], "type", p) == "Ready")
          node.ready = string_at((*conditions)[i], "status", p) == "True";
      }
    }
  }
  return node;
}

template <class J>
ResourceQuota parse_quota_or_throw(const J& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourcequota", "an object", object);
  ResourceQuota quota;
  const ObjectMeta meta = parse_meta(object, root);
  quota.namespace_ = meta.namespace_;
  quota.name = meta.name;
  if (const J* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    quota.hard = resource_list(object_at(*spec, "hard", spec_path), spec_path / "hard");
    quota.scopes = string_list(array_at(*spec, "scopes", spec_path), spec_path / "scopes");
    if (const J* selector = object_at(*spec, "scopeSelector", spec_path)) {
      const Path selector_path = spec_path / "scopeSelector";
      if (const J* list = array_at(*selector, "matchExpressions", selector_path)) {
        for (std::size_t i = 0; i < list->size(); ++i) {
          const Path p = (selector_path / "matchExpressions")[i];
          quota.scope_selector.push_back({string_at((*list)[i], "scopeName", p),
                                          string_at((*list)[i], "operator", p),
                                          string_list(array_at((*list)[i], "values", p), p / "values")});
        }
      }
    }
  }
  if (const J* status = object_at(object, "status", root)) {
    if (const J* hard = object_at(*status, "hard", root / "status")) {
      quota.hard = resource_list(hard, root / "status" / "hard");  // the enforced values, when reported
    }
    quota.used = resource_list(object_at(*status, "used", root / "status"), root / "status" / "used");
  }
  return quota;
}

template <class J>
StorageClass parse_storage_class_or_throw(const J& object) {
  const Path root;
  if (!object.is_object()) fail(root / "storageclass", "an object", object);
  const ObjectMeta meta = parse_meta(object, root);
  StorageClass sc;
  sc.name = meta.name;
  sc.provisioner = string_at(object, "provisioner", root);
  for (const char* key :
       {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"}) {
    const auto it = meta.annotations.find(key);
    if (it != meta.annotations.end() && it->second == "true") sc.is_default = true;
  }
  return sc;
}

template <class J>
PersistentVolumeClaim parse_claim_or_throw(const J& object) {
  const Path root;
  if (!object.is_object()) fail(root / "persistentvolumeclaim", "an object", object);
  PersistentVolumeClaim claim;
  claim.meta = parse_meta(object, root);
  if (const J* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const J* sc = member(*spec, "storageClassName", spec_path)) {
      if (!sc->is_string()) fail(spec_path / "storageClassName", "a string", *sc);
      claim.storage_class = std::string(text(*sc));
    }
    if (const J* resources = object_at(*spec, "resources", spec_path)) {
      const ResourceRequirements r = requirements(resources, spec_path / "resources");
      if (const auto it = r.requests.find("storage"); it != r.requests.end()) claim.request = it->second;
    }
  }
  if (const J* status = object_at(object, "status", root))
    claim.phase = string_at(*status, "phase", root / "status");
  return claim;
}

template <typename T, typename F>
Result<T> guarded(F&& parse) {
  try {
    return parse();
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

}  // namespace

Result<ResourceQuota> parse_resource_quota(const json& object) {
  return guarded<ResourceQuota>([&] { return parse_quota_or_throw(object); });
}

Result<StorageClass> parse_storage_class(const json& object) {
  return guarded<StorageClass>([&] { return parse_storage_class_or_throw(object); });
}

Result<PersistentVolumeClaim> parse_persistent_volume_claim(const json& object) {
  return guarded<PersistentVolumeClaim>([&] { return parse_claim_or_throw(object); });
}

Result<Pod> parse_pod(const json& object) {
  auto document = OwnedJsonDocument::of(object);
  if (!document) return document.error();
  return parse_pod(document->root());
}

Result<Pod> parse_pod(const JsonValue& object) {
  try {
    return parse_pod_or_throw(object);
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

namespace {

// The container a part belongs to, or nullptr.
Container* container_of(Pod& pod, const PodPart& part) {
  const auto c = std::find_if(pod.containers.begin(), pod.containers.end(), [&](const Container& x) {
    return x.index == part.index && x.array_name() == part.array;
  });
  return c != pod.containers.end() ? &*c : nullptr;
}

// Reads `items` with `parse` (given the list's path and the index of the first item) onto the end of `list`.
template <class T, class Parse>
void append_items(std::vector<T>& list, const json& items, const Path& path, const Parse& parse) {
  std::vector<T> read = parse(&items, path, list.size());
  list.insert(list.end(), std::make_move_iterator(read.begin()), std::make_move_iterator(read.end()));
}

}  // namespace

Result<bool> parse_pod_part(const PodPart& part, const json& value, Pod& pod) {
  try {
    const Path root;
    const Path scope_path = root / (part.scope == PodPart::Scope::kMetadata ? "metadata" : "spec");
    const Path path = scope_path / part.member;
    switch (part.scope) {
      case PodPart::Scope::kContainer: {
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
          return make_error("internal: " + member_path.str() +
                            " is not a part of a pod that gpuadmit reads back");
        }
        return true;
      }
      case PodPart::Scope::kSpec:
        if (part.member == "resources") {
          const json* resources = as_object(value, path);
          pod.pod_resources =
              resources == nullptr ? std::nullopt : std::optional(requirements(resources, path));
        } else if (part.member == "affinity") {
          parse_affinity(as_object(value, path), path, pod);
        } else if (part.member == "tolerations") {
          pod.tolerations = parse_tolerations(as_array(value, path), path);
        } else if (part.member == "volumes") {
          pod.volumes = parse_volumes(as_array(value, path), path);
        } else if (part.member == "nodeSelector") {
          pod.node_selector = string_map(as_object(value, path), path);
        } else {
          break;
        }
        return true;
      case PodPart::Scope::kMetadata:
        if (part.member == "annotations") {
          pod.meta.annotations = string_map(as_object(value, path), path);
        } else if (part.member == "labels") {
          pod.meta.labels = string_map(as_object(value, path), path);
        } else {
          break;
        }
        return true;
    }
    return make_error("internal: " + path.str() + " is not a part of a pod that gpuadmit reads back");
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

Result<bool> parse_pod_part_items(const PodPart& part, const json& items, Pod& pod) {
  try {
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
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

Result<Node> parse_node(const json& object) {
  try {
    return parse_node_or_throw(object);
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

Result<ResourceList> parse_resource_list(const json& list, const std::string& path) {
  try {
    return resource_list(&list, Path{nullptr, path});
  } catch (const FieldError& e) {
    return make_error(e.message);
  }
}

std::string display_name(const ObjectMeta& meta) {
  if (!meta.name.empty()) return meta.name;
  if (!meta.generate_name.empty()) return meta.generate_name + "*";
  return "<unnamed>";
}

}  // namespace gpuadmit::k8s
