#include "gpuadmit/k8s/pod_parser.hpp"

#include <nlohmann/json.hpp>

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

const char* type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    default: return "a number";
  }
}

[[noreturn]] void fail(const Path& path, const char* expected, const json& got) {
  throw FieldError{path.str() + ": expected " + expected + ", got " + type_name(got)};
}

// Returns the member or nullptr when absent or null (Kubernetes treats both as unset).
const json* member(const json& object, std::string_view key, const Path& path) {
  if (!object.is_object()) fail(path, "an object", object);
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string string_at(const json& object, std::string_view key, const Path& path) {
  const json* value = member(object, key, path);
  if (value == nullptr) return {};
  if (!value->is_string()) fail(path / key, "a string", *value);
  return value->get<std::string>();
}

const json* object_at(const json& object, std::string_view key, const Path& path) {
  const json* value = member(object, key, path);
  if (value != nullptr && !value->is_object()) fail(path / key, "an object", *value);
  return value;
}

const json* array_at(const json& object, std::string_view key, const Path& path) {
  const json* value = member(object, key, path);
  if (value != nullptr && !value->is_array()) fail(path / key, "a list", *value);
  return value;
}

StringMap string_map(const json* object, const Path& path) {
  StringMap out;
  if (object == nullptr) return out;
  // Walks the map itself: nlohmann's items() copies two strings per step, and this runs per re-parse.
  for (const auto& [key, value] : object->get_ref<const json::object_t&>()) {
    if (!value.is_string()) fail(path / key, "a string", value);
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

std::vector<std::string> string_list(const json* list, const Path& path) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) fail(path[i], "a string", (*list)[i]);
    out.push_back((*list)[i].get<std::string>());
  }
  return out;
}

Quantity quantity(const json& value, const Path& path) {
  // The API server accepts numbers too (Quantity.UnmarshalJSON); users' YAML often has them.
  Result<Quantity> parsed = make_error("");
  if (value.is_string()) {
    parsed = Quantity::parse(value.get_ref<const std::string&>());
  } else if (value.is_number()) {
    parsed = Quantity::parse(value.dump());
  } else {
    fail(path, "a quantity such as \"2\" or \"16Gi\"", value);
  }
  if (!parsed) throw FieldError{path.str() + ": " + parsed.error().message};
  return *parsed;
}

ResourceList resource_list(const json* list, const Path& path) {
  ResourceList out;
  if (list == nullptr) return out;
  if (!list->is_object()) fail(path, "an object", *list);
  for (const auto& [name, value] : list->get_ref<const json::object_t&>()) {
    out.emplace_hint(out.end(), name, quantity(value, path / name));
  }
  return out;
}

ResourceRequirements requirements(const json* resources, const Path& path) {
  ResourceRequirements out;
  if (resources == nullptr) return out;
  out.requests = resource_list(object_at(*resources, "requests", path), path / "requests");
  out.limits = resource_list(object_at(*resources, "limits", path), path / "limits");
  return out;
}

Container container(const json& object, ContainerKind kind, std::size_t index, const Path& path) {
  Container c;
  c.kind = kind;
  c.index = index;
  c.name = string_at(object, "name", path);
  c.image = string_at(object, "image", path);
  if (kind == ContainerKind::kInit && string_at(object, "restartPolicy", path) == "Always") {
    c.kind = ContainerKind::kSidecar;
  }
  c.resources = requirements(object_at(object, "resources", path), path / "resources");
  if (const json* mounts = array_at(object, "volumeMounts", path)) {
    for (std::size_t i = 0; i < mounts->size(); ++i) {
      const Path volume_mounts_path = path / "volumeMounts";
      const Path p = volume_mounts_path[i];
      c.volume_mounts.push_back({string_at((*mounts)[i], "name", p), string_at((*mounts)[i], "mountPath", p)});
    }
  }
  c.command = string_list(array_at(object, "command", path), path / "command");
  c.args = string_list(array_at(object, "args", path), path / "args");
  if (const json* env = array_at(object, "env", path)) {
    for (std::size_t i = 0; i < env->size(); ++i) {
      c.env_names.push_back(string_at((*env)[i], "name", (path / "env")[i]));
    }
  }
  return c;
}

std::vector<NodeSelectorRequirement> requirements_list(const json* list, const Path& path) {
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

void parse_affinity(const json& spec, const Path& spec_path, Pod& pod) {
  const json* affinity = object_at(spec, "affinity", spec_path);
  if (affinity == nullptr) return;
  const Path affinity_path = spec_path / "affinity";
  const json* node_affinity = object_at(*affinity, "nodeAffinity", affinity_path);
  if (node_affinity == nullptr) return;
  const Path node_path = affinity_path / "nodeAffinity";
  const json* required = object_at(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", node_path);
  if (required == nullptr) return;
  const Path required_path = node_path / "requiredDuringSchedulingIgnoredDuringExecution";
  pod.has_required_affinity = true;
  if (const json* terms = array_at(*required, "nodeSelectorTerms", required_path)) {
    for (std::size_t i = 0; i < terms->size(); ++i) {
      const Path node_selector_terms_path = required_path / "nodeSelectorTerms";
      const Path p = node_selector_terms_path[i];
      pod.required_node_terms.push_back(
          {requirements_list(array_at((*terms)[i], "matchExpressions", p), p / "matchExpressions"),
           requirements_list(array_at((*terms)[i], "matchFields", p), p / "matchFields")});
    }
  }
}

void parse_volumes(const json& spec, const Path& spec_path, Pod& pod) {
  const json* volumes = array_at(spec, "volumes", spec_path);
  if (volumes == nullptr) return;
  for (std::size_t i = 0; i < volumes->size(); ++i) {
    const Path volumes_path = spec_path / "volumes";
    const Path p = volumes_path[i];
    const json& v = (*volumes)[i];
    Volume volume;
    volume.name = string_at(v, "name", p);
    if (const json* empty_dir = object_at(v, "emptyDir", p)) {
      volume.empty_dir = true;
      volume.medium = string_at(*empty_dir, "medium", p / "emptyDir");
      if (const json* limit = member(*empty_dir, "sizeLimit", p / "emptyDir")) {
        volume.size_limit = quantity(*limit, p / "emptyDir" / "sizeLimit");
      }
    }
    if (const json* claim = object_at(v, "persistentVolumeClaim", p)) {
      volume.claim_name = string_at(*claim, "claimName", p / "persistentVolumeClaim");
    }
    pod.volumes.push_back(std::move(volume));
  }
}

void parse_tolerations(const json& spec, const Path& spec_path, Pod& pod) {
  const json* tolerations = array_at(spec, "tolerations", spec_path);
  if (tolerations == nullptr) return;
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const Path tolerations_path = spec_path / "tolerations";
    const Path p = tolerations_path[i];
    const json& t = (*tolerations)[i];
    Toleration toleration{string_at(t, "key", p), string_at(t, "operator", p), string_at(t, "value", p),
                          string_at(t, "effect", p), std::nullopt};
    if (const json* seconds = member(t, "tolerationSeconds", p)) {
      if (!seconds->is_number_integer()) fail(p / "tolerationSeconds", "an integer", *seconds);
      toleration.toleration_seconds = seconds->get<std::int64_t>();
    }
    pod.tolerations.push_back(std::move(toleration));
  }
}

ObjectMeta parse_meta(const json& object, const Path& root) {
  ObjectMeta meta;
  if (const json* m = object_at(object, "metadata", root)) {
    const Path p = root / "metadata";
    meta.name = string_at(*m, "name", p);
    meta.generate_name = string_at(*m, "generateName", p);
    meta.namespace_ = string_at(*m, "namespace", p);
    meta.labels = string_map(object_at(*m, "labels", p), p / "labels");
    meta.annotations = string_map(object_at(*m, "annotations", p), p / "annotations");
  }
  return meta;
}

Pod parse_pod_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "object", "an object", object);
  Pod pod;
  pod.meta = parse_meta(object, root);
  const json* spec = object_at(object, "spec", root);
  if (spec == nullptr) throw FieldError{"spec: missing (a pod needs a spec with containers)"};
  const Path spec_path = root / "spec";
  const json* init = array_at(*spec, "initContainers", spec_path);
  const json* app = array_at(*spec, "containers", spec_path);
  pod.containers.reserve((init != nullptr ? init->size() : 0) + (app != nullptr ? app->size() : 0));
  if (init != nullptr) {
    for (std::size_t i = 0; i < init->size(); ++i) {
      pod.containers.push_back(container((*init)[i], ContainerKind::kInit, i, (spec_path / "initContainers")[i]));
    }
  }
  if (app != nullptr) {
    for (std::size_t i = 0; i < app->size(); ++i) {
      pod.containers.push_back(container((*app)[i], ContainerKind::kRegular, i, (spec_path / "containers")[i]));
    }
  }
  pod.node_selector = string_map(object_at(*spec, "nodeSelector", spec_path), spec_path / "nodeSelector");
  pod.node_name = string_at(*spec, "nodeName", spec_path);
  if (const json* resources = object_at(*spec, "resources", spec_path)) {
    pod.pod_resources = requirements(resources, spec_path / "resources");
  }
  parse_affinity(*spec, spec_path, pod);
  parse_tolerations(*spec, spec_path, pod);
  parse_volumes(*spec, spec_path, pod);
  if (const json* status = object_at(object, "status", root)) pod.status_qos_class = string_at(*status, "qosClass", root / "status");
  return pod;
}

Node parse_node_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "node", "an object", object);
  Node node;
  const ObjectMeta meta = parse_meta(object, root);
  node.name = meta.name;
  node.labels = meta.labels;
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const json* unschedulable = member(*spec, "unschedulable", spec_path)) {
      if (!unschedulable->is_boolean()) fail(spec_path / "unschedulable", "a boolean", *unschedulable);
      node.unschedulable = unschedulable->get<bool>();
    }
    if (const json* taints = array_at(*spec, "taints", spec_path)) {
      for (std::size_t i = 0; i < taints->size(); ++i) {
        const Path taints_path = spec_path / "taints";
        const Path p = taints_path[i];
        node.taints.push_back(
            {string_at((*taints)[i], "key", p), string_at((*taints)[i], "value", p), string_at((*taints)[i], "effect", p)});
      }
    }
  }
  if (const json* status = object_at(object, "status", root)) {
    const Path status_path = root / "status";
    node.allocatable = resource_list(object_at(*status, "allocatable", status_path), status_path / "allocatable");
    if (const json* conditions = array_at(*status, "conditions", status_path)) {
      for (std::size_t i = 0; i < conditions->size(); ++i) {
        const Path conditions_path = status_path / "conditions";
        const Path p = conditions_path[i];
        if (string_at((*conditions)[i], "type", p) == "Ready") node.ready = string_at((*conditions)[i], "status", p) == "True";
      }
    }
  }
  return node;
}

ResourceQuota parse_quota_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourcequota", "an object", object);
  ResourceQuota quota;
  const ObjectMeta meta = parse_meta(object, root);
  quota.namespace_ = meta.namespace_;
  quota.name = meta.name;
  if (const json* spec = object_at(object, "spec", root)) {
    quota.hard = resource_list(object_at(*spec, "hard", root / "spec"), root / "spec" / "hard");
  }
  if (const json* status = object_at(object, "status", root)) {
    if (const json* hard = object_at(*status, "hard", root / "status")) {
      quota.hard = resource_list(hard, root / "status" / "hard");  // the enforced values, when reported
    }
    quota.used = resource_list(object_at(*status, "used", root / "status"), root / "status" / "used");
  }
  return quota;
}

StorageClass parse_storage_class_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "storageclass", "an object", object);
  const ObjectMeta meta = parse_meta(object, root);
  StorageClass sc;
  sc.name = meta.name;
  sc.provisioner = string_at(object, "provisioner", root);
  for (const char* key : {"storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"}) {
    const auto it = meta.annotations.find(key);
    if (it != meta.annotations.end() && it->second == "true") sc.is_default = true;
  }
  return sc;
}

PersistentVolumeClaim parse_claim_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "persistentvolumeclaim", "an object", object);
  PersistentVolumeClaim claim;
  claim.meta = parse_meta(object, root);
  if (const json* spec = object_at(object, "spec", root)) {
    const Path spec_path = root / "spec";
    if (const json* sc = member(*spec, "storageClassName", spec_path)) {
      if (!sc->is_string()) fail(spec_path / "storageClassName", "a string", *sc);
      claim.storage_class = sc->get<std::string>();
    }
    if (const json* resources = object_at(*spec, "resources", spec_path)) {
      const ResourceRequirements r = requirements(resources, spec_path / "resources");
      if (const auto it = r.requests.find("storage"); it != r.requests.end()) claim.request = it->second;
    }
  }
  if (const json* status = object_at(object, "status", root)) claim.phase = string_at(*status, "phase", root / "status");
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
  try {
    return parse_pod_or_throw(object);
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
