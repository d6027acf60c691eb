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

[[noreturn]] void fail(const std::string& path, const char* expected, const json& got) {
  throw FieldError{path + ": expected " + expected + ", got " + type_name(got)};
}

// Returns the member or nullptr when absent or null (Kubernetes treats both as unset).
const json* member(const json& object, const char* key, const std::string& path) {
  if (!object.is_object()) fail(path, "an object", object);
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string string_at(const json& object, const char* key, const std::string& path) {
  const json* value = member(object, key, path);
  if (value == nullptr) return {};
  if (!value->is_string()) fail(path + "." + key, "a string", *value);
  return value->get<std::string>();
}

const json* object_at(const json& object, const char* key, const std::string& path) {
  const json* value = member(object, key, path);
  if (value != nullptr && !value->is_object()) fail(path + "." + key, "an object", *value);
  return value;
}

const json* array_at(const json& object, const char* key, const std::string& path) {
  const json* value = member(object, key, path);
  if (value != nullptr && !value->is_array()) fail(path + "." + key, "a list", *value);
  return value;
}

StringMap string_map(const json* object, const std::string& path) {
  StringMap out;
  if (object == nullptr) return out;
  for (const auto& [key, value] : object->items()) {
    if (!value.is_string()) fail(path + "." + key, "a string", value);
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

std::vector<std::string> string_list(const json* list, const std::string& path) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) fail(path + "[" + std::to_string(i) + "]", "a string", (*list)[i]);
    out.push_back((*list)[i].get<std::string>());
  }
  return out;
}

Quantity quantity(const json& value, const std::string& path) {
  // The API server accepts numbers too (Quantity.UnmarshalJSON); users' YAML often has them.
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number()) {
    text = value.dump();
  } else {
    fail(path, "a quantity such as \"2\" or \"16Gi\"", value);
  }
  auto parsed = Quantity::parse(text);
  if (!parsed) throw FieldError{path + ": " + parsed.error().message};
  return *parsed;
}

ResourceList resource_list(const json* list, const std::string& path) {
  ResourceList out;
  if (list == nullptr) return out;
  if (!list->is_object()) fail(path, "an object", *list);
  for (const auto& [name, value] : list->items()) out.emplace(name, quantity(value, path + "." + name));
  return out;
}

ResourceRequirements requirements(const json* resources, const std::string& path) {
  ResourceRequirements out;
  if (resources == nullptr) return out;
  out.requests = resource_list(object_at(*resources, "requests", path), path + ".requests");
  out.limits = resource_list(object_at(*resources, "limits", path), path + ".limits");
  return out;
}

Container container(const json& object, ContainerKind kind, std::size_t index, const std::string& path) {
  Container c;
  c.kind = kind;
  c.index = index;
  c.name = string_at(object, "name", path);
  c.image = string_at(object, "image", path);
  if (kind == ContainerKind::kInit && string_at(object, "restartPolicy", path) == "Always") {
    c.kind = ContainerKind::kSidecar;
  }
  c.resources = requirements(object_at(object, "resources", path), path + ".resources");
  if (const json* mounts = array_at(object, "volumeMounts", path)) {
    for (std::size_t i = 0; i < mounts->size(); ++i) {
      const std::string p = path + ".volumeMounts[" + std::to_string(i) + "]";
      c.volume_mounts.push_back({string_at((*mounts)[i], "name", p), string_at((*mounts)[i], "mountPath", p)});
    }
  }
  c.command = string_list(array_at(object, "command", path), path + ".command");
  c.args = string_list(array_at(object, "args", path), path + ".args");
  if (const json* env = array_at(object, "env", path)) {
    for (std::size_t i = 0; i < env->size(); ++i) {
      c.env_names.push_back(string_at((*env)[i], "name", path + ".env[" + std::to_string(i) + "]"));
    }
  }
  return c;
}

std::vector<NodeSelectorRequirement> requirements_list(const json* list, const std::string& path) {
  std::vector<NodeSelectorRequirement> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    NodeSelectorRequirement r{string_at((*list)[i], "key", p), string_at((*list)[i], "operator", p), {}};
    if (const json* values = array_at((*list)[i], "values", p)) {
      for (std::size_t j = 0; j < values->size(); ++j) {
        if (!(*values)[j].is_string()) fail(p + ".values[" + std::to_string(j) + "]", "a string", (*values)[j]);
        r.values.push_back((*values)[j].get<std::string>());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void parse_affinity(const json& spec, Pod& pod) {
  const json* affinity = object_at(spec, "affinity", "spec");
  if (affinity == nullptr) return;
  const json* node_affinity = object_at(*affinity, "nodeAffinity", "spec.affinity");
  if (node_affinity == nullptr) return;
  const std::string path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  const json* required =
      object_at(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution", "spec.affinity.nodeAffinity");
  if (required == nullptr) return;
  pod.has_required_affinity = true;
  if (const json* terms = array_at(*required, "nodeSelectorTerms", path)) {
    for (std::size_t i = 0; i < terms->size(); ++i) {
      const std::string p = path + ".nodeSelectorTerms[" + std::to_string(i) + "]";
      pod.required_node_terms.push_back(
          {requirements_list(array_at((*terms)[i], "matchExpressions", p), p + ".matchExpressions"),
           requirements_list(array_at((*terms)[i], "matchFields", p), p + ".matchFields")});
    }
  }
}

void parse_volumes(const json& spec, Pod& pod) {
  const json* volumes = array_at(spec, "volumes", "spec");
  if (volumes == nullptr) return;
  for (std::size_t i = 0; i < volumes->size(); ++i) {
    const std::string p = "spec.volumes[" + std::to_string(i) + "]";
    const json& v = (*volumes)[i];
    Volume volume;
    volume.name = string_at(v, "name", p);
    if (const json* empty_dir = object_at(v, "emptyDir", p)) {
      volume.empty_dir = true;
      volume.medium = string_at(*empty_dir, "medium", p + ".emptyDir");
      if (const json* limit = member(*empty_dir, "sizeLimit", p + ".emptyDir")) {
        volume.size_limit = quantity(*limit, p + ".emptyDir.sizeLimit");
      }
    }
    if (const json* claim = object_at(v, "persistentVolumeClaim", p)) {
      volume.claim_name = string_at(*claim, "claimName", p + ".persistentVolumeClaim");
    }
    pod.volumes.push_back(std::move(volume));
  }
}

void parse_tolerations(const json& spec, Pod& pod) {
  const json* tolerations = array_at(spec, "tolerations", "spec");
  if (tolerations == nullptr) return;
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const std::string p = "spec.tolerations[" + std::to_string(i) + "]";
    const json& t = (*tolerations)[i];
    Toleration toleration{string_at(t, "key", p), string_at(t, "operator", p), string_at(t, "value", p),
                          string_at(t, "effect", p), std::nullopt};
    if (const json* seconds = member(t, "tolerationSeconds", p)) {
      if (!seconds->is_number_integer()) fail(p + ".tolerationSeconds", "an integer", *seconds);
      toleration.toleration_seconds = seconds->get<std::int64_t>();
    }
    pod.tolerations.push_back(std::move(toleration));
  }
}

Pod parse_pod_or_throw(const json& object) {
  if (!object.is_object()) fail("object", "an object", object);
  Pod pod;
  if (const json* meta = object_at(object, "metadata", "")) {
    pod.meta.name = string_at(*meta, "name", "metadata");
    pod.meta.generate_name = string_at(*meta, "generateName", "metadata");
    pod.meta.namespace_ = string_at(*meta, "namespace", "metadata");
    pod.meta.labels = string_map(object_at(*meta, "labels", "metadata"), "metadata.labels");
    pod.meta.annotations = string_map(object_at(*meta, "annotations", "metadata"), "metadata.annotations");
  }
  const json* spec = object_at(object, "spec", "");
  if (spec == nullptr) throw FieldError{"spec: missing (a pod needs a spec with containers)"};
  if (const json* init = array_at(*spec, "initContainers", "spec")) {
    for (std::size_t i = 0; i < init->size(); ++i) {
      pod.containers.push_back(
          container((*init)[i], ContainerKind::kInit, i, "spec.initContainers[" + std::to_string(i) + "]"));
    }
  }
  if (const json* app = array_at(*spec, "containers", "spec")) {
    for (std::size_t i = 0; i < app->size(); ++i) {
      pod.containers.push_back(
          container((*app)[i], ContainerKind::kRegular, i, "spec.containers[" + std::to_string(i) + "]"));
    }
  }
  pod.node_selector = string_map(object_at(*spec, "nodeSelector", "spec"), "spec.nodeSelector");
  pod.node_name = string_at(*spec, "nodeName", "spec");
  if (const json* resources = object_at(*spec, "resources", "spec")) {
    pod.pod_resources = requirements(resources, "spec.resources");
  }
  parse_affinity(*spec, pod);
  parse_tolerations(*spec, pod);
  parse_volumes(*spec, pod);
  if (const json* status = object_at(object, "status", "")) pod.status_qos_class = string_at(*status, "qosClass", "status");
  return pod;
}

Node parse_node_or_throw(const json& object) {
  if (!object.is_object()) fail("node", "an object", object);
  Node node;
  if (const json* meta = object_at(object, "metadata", "")) {
    node.name = string_at(*meta, "name", "metadata");
    node.labels = string_map(object_at(*meta, "labels", "metadata"), "metadata.labels");
  }
  if (const json* spec = object_at(object, "spec", "")) {
    if (const json* unschedulable = member(*spec, "unschedulable", "spec")) {
      if (!unschedulable->is_boolean()) fail("spec.unschedulable", "a boolean", *unschedulable);
      node.unschedulable = unschedulable->get<bool>();
    }
    if (const json* taints = array_at(*spec, "taints", "spec")) {
      for (std::size_t i = 0; i < taints->size(); ++i) {
        const std::string p = "spec.taints[" + std::to_string(i) + "]";
        node.taints.push_back(
            {string_at((*taints)[i], "key", p), string_at((*taints)[i], "value", p), string_at((*taints)[i], "effect", p)});
      }
    }
  }
  if (const json* status = object_at(object, "status", "")) {
    node.allocatable = resource_list(object_at(*status, "allocatable", "status"), "status.allocatable");
    if (const json* conditions = array_at(*status, "conditions", "status")) {
      for (std::size_t i = 0; i < conditions->size(); ++i) {
        const std::string p = "status.conditions[" + std::to_string(i) + "]";
        if (string_at((*conditions)[i], "type", p) == "Ready") node.ready = string_at((*conditions)[i], "status", p) == "True";
      }
    }
  }
  return node;
}

}  // namespace

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
    return resource_list(&list, path);
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
