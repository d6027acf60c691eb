#include "assembled_pod.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"

namespace gpuadmit::policy {
namespace {

// The members of a PodSpec other than its containers: what a source may give the pod.
// activeDeadlineSeconds and priority are left out: Argo's are the workflow's own (a deadline that may be a
// string, a scheduling priority among workflows), not its pods'.
constexpr std::array<std::string_view, 35> kSpecMembers = {"affinity",
                                                           "automountServiceAccountToken",
                                                           "dnsConfig",
                                                           "dnsPolicy",
                                                           "enableServiceLinks",
                                                           "hostAliases",
                                                           "hostIPC",
                                                           "hostNetwork",
                                                           "hostPID",
                                                           "hostUsers",
                                                           "hostname",
                                                           "hostnameOverride",
                                                           "imagePullSecrets",
                                                           "nodeName",
                                                           "nodeSelector",
                                                           "os",
                                                           "overhead",
                                                           "preemptionPolicy",
                                                           "priorityClassName",
                                                           "readinessGates",
                                                           "resourceClaims",
                                                           "resources",
                                                           "restartPolicy",
                                                           "runtimeClassName",
                                                           "schedulerName",
                                                           "schedulingGates",
                                                           "securityContext",
                                                           "serviceAccount",
                                                           "serviceAccountName",
                                                           "setHostnameAsFQDN",
                                                           "shareProcessNamespace",
                                                           "subdomain",
                                                           "terminationGracePeriodSeconds",
                                                           "tolerations",
                                                           "topologySpreadConstraints"};

bool is_spec_member(std::string_view m) {
  return std::ranges::find(kSpecMembers, m) != kSpecMembers.end();
}

// An empty list or map is no value: Argo takes the workflow's tolerations when a template's are empty.
bool has_value(const k8s::JsonValue& v) {
  if (v.is_array()) return !v.items().empty();
  if (v.is_object()) return !v.members().empty();
  return !v.is_null();
}

PodSource resolve(const k8s::JsonValue& root, const TemplateSite& site, const FieldRef& ref) {
  PodSource out;
  const k8s::JsonValue* node = ref.from_root ? &root : site.pod_template;
  out.pointer = ref.from_root ? std::string() : site.pointer;
  out.field = ref.from_root ? std::string() : site.field;
  for (const std::string& member : ref.members) {
    node = node != nullptr && node->is_object() ? node->find(member) : nullptr;
    k8s::append_pointer_token(out.pointer, member);
    out.field += (out.field.empty() ? "" : ".") + member;
    if (node == nullptr) out.missing.push_back(out.pointer);
  }
  out.value = node != nullptr && node->is_object() ? node : nullptr;
  out.is_object = node == nullptr || node->is_object();
  return out;
}

// A controller's placeholder, filled in when it creates the pod: Argo's "{{inputs.parameters.gpus}}",
// Tekton's "$(params.gpus)".
bool has_placeholder(const nlohmann::json& value) {
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    return s.find("{{") != std::string::npos || s.find("$(") != std::string::npos;
  }
  if (value.is_structured()) {
    for (const auto& item : value) {
      if (has_placeholder(item)) return true;
    }
  }
  return false;
}

std::string string_or_empty(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void add_container(AssembledPod& out, nlohmann::json& containers, const k8s::JsonValue& container,
                   std::string pointer, std::string field, const std::string& member) {
  if (!container.is_object()) return;
  nlohmann::json c = k8s::to_json(container);
  if (!c.contains("name") || !c["name"].is_string()) c["name"] = member;
  // NIM's image is {repository, tag}.
  if (c.contains("image") && c["image"].is_object()) {
    const std::string tag = string_or_empty(c["image"], "tag");
    c["image"] = string_or_empty(c["image"], "repository") + (tag.empty() ? "" : ":" + tag);
  }
  if (out.resources != "resources") {
    c.erase("resources");
    if (c.contains(out.resources)) {
      c["resources"] = std::move(c[out.resources]);
      c.erase(out.resources);
    }
  }
  if (out.run_time_field.empty() && c.contains("resources") && has_placeholder(c["resources"])) {
    out.run_time_field = field + "." + out.resources;
  }
  containers.push_back(std::move(c));
  out.container_pointers.push_back(std::move(pointer));
  out.container_fields.push_back(std::move(field));
}

void add_containers(AssembledPod& out, nlohmann::json& containers, const k8s::JsonValue& object,
                    const TemplateSite& site) {
  if (const k8s::JsonValue* own = object.find("containers"); own != nullptr && own->is_array()) {
    for (std::size_t i = 0; i < own->items().size(); ++i) {
      add_container(out, containers, own->items()[i], site.pointer + "/containers/" + std::to_string(i),
                    site.field + ".containers[" + std::to_string(i) + "]", "container");
    }
  }
  for (const FieldRef& ref : site.source->containers) {
    const k8s::JsonValue* node = &object;
    std::string pointer = site.pointer;
    std::string field = site.field;
    for (const std::string& member : ref.members) {
      node = node->is_object() ? node->find(member) : nullptr;
      if (node == nullptr) break;
      k8s::append_pointer_token(pointer, member);
      field += "." + member;
    }
    if (node == nullptr) continue;
    // Unnamed, a container is named for its member, except where its controller names it "main" (an Argo
    // template's container or script, a NIMService's or TrainJob's object itself).
    const bool main =
        ref.members.empty() || ref.members.back() == "container" || ref.members.back() == "script";
    const std::string name = main ? "main" : ref.members.back();
    if (node->is_array()) {
      for (std::size_t i = 0; i < node->items().size(); ++i) {
        add_container(out, containers, node->items()[i], pointer + "/" + std::to_string(i),
                      field + "[" + std::to_string(i) + "]", name + "[" + std::to_string(i) + "]");
      }
    } else {
      add_container(out, containers, *node, pointer, field, name);
    }
  }
}

// Each spec member from the first source that has it; volumes from every source, the first name winning.
// A source that is also a container (a NIMService's spec) gives no pod-level resources.
void add_spec_members(AssembledPod& out, nlohmann::json& spec, const TemplateSite& site) {
  std::set<std::string> volume_names;
  nlohmann::json volumes = nlohmann::json::array();
  for (std::size_t s = 0; s < out.sources.size(); ++s) {
    const k8s::JsonValue* source = out.sources[s].value;
    if (source == nullptr) continue;
    const bool is_container = source == site.pod_template &&
                              std::any_of(site.source->containers.begin(), site.source->containers.end(),
                                          [](const FieldRef& r) { return r.members.empty(); });
    for (const auto& [name, value] : source->members()) {
      if (name == "volumes" && value.is_array()) {
        for (const k8s::JsonValue& v : value.items()) {
          const std::string_view vn = v.is_object() ? k8s::string_member(v, "name") : std::string_view();
          if (!volume_names.emplace(vn).second) continue;
          volumes.push_back(k8s::to_json(v));
          if (s == 0) ++out.own_volumes;
        }
        continue;
      }
      if (!is_spec_member(name) || (is_container && name == "resources") ||
          spec.contains(std::string(name)) || !has_value(value))
        continue;
      spec[std::string(name)] = k8s::to_json(value);
      out.member_source[std::string(name)] = s;
    }
  }
  if (!volumes.empty()) spec["volumes"] = std::move(volumes);
}

nlohmann::json metadata_of(const k8s::JsonValue& root, const TemplateSite& site) {
  nlohmann::json metadata = nlohmann::json::object();
  for (const FieldRef& ref : site.source->metadata) {
    const PodSource source = resolve(root, site, ref);
    if (source.value == nullptr) continue;
    for (const char* list : {"labels", "annotations"}) {
      const k8s::JsonValue* entries = source.value->find(list);
      if (entries == nullptr || !entries->is_object()) continue;
      for (const auto& [key, value] : entries->members()) {
        if (!value.is_string() || metadata[list].contains(std::string(key))) continue;
        metadata[list][std::string(key)] = std::string(value.string());
      }
    }
  }
  return metadata;
}

}  // namespace

AssembledPod assemble_pod(const k8s::JsonValue& root, const TemplateSite& site) {
  AssembledPod out;
  const WorkloadPod& source = *site.source;
  out.resources = source.resources;
  out.site_pointer = site.pointer;
  out.site_field = site.field;
  out.partial = source.partial;
  for (const FieldRef& ref : source.partial_if) {
    const PodSource where = resolve(root, site, ref);
    const k8s::JsonValue* node = value_at(root, where.pointer);
    if (node != nullptr && has_value(*node)) out.partial = true;
  }
  for (const FieldRef& ref : source.fields) out.sources.push_back(resolve(root, site, ref));
  if (out.sources.empty()) out.sources.push_back(resolve(root, site, FieldRef{}));
  if (!source.metadata.empty() && !source.metadata.front().from_root) {
    out.metadata_target = resolve(root, site, source.metadata.front());
  }
  for (const PodSource& s : out.sources) {
    if (!s.is_object && out.invalid_source.empty()) out.invalid_source = s.field;
  }
  if (out.metadata_target && !out.metadata_target->is_object) out.invalid_source = out.metadata_target->field;
  nlohmann::json spec = nlohmann::json::object();
  add_spec_members(out, spec, site);
  if (const k8s::JsonValue* init = site.pod_template->find("initContainers"); init != nullptr) {
    spec["initContainers"] = k8s::to_json(*init);
  }
  nlohmann::json containers = nlohmann::json::array();
  add_containers(out, containers, *site.pod_template, site);
  spec["containers"] = std::move(containers);
  // What decides a verdict must be known now: placement, and the init containers' resources.
  for (const char* member :
       {"nodeSelector", "affinity", "tolerations", "priorityClassName", "runtimeClassName"}) {
    if (out.run_time_field.empty() && spec.contains(member) && has_placeholder(spec[member])) {
      out.run_time_field = site_field(out, std::string("spec.") + member);
    }
  }
  if (out.run_time_field.empty() && spec.contains("initContainers") && spec["initContainers"].is_array()) {
    for (const nlohmann::json& c : spec["initContainers"]) {
      if (c.is_object() && c.contains("resources") && has_placeholder(c["resources"])) {
        out.run_time_field = site.field + ".initContainers";
      }
    }
  }
  out.pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", metadata_of(root, site)}, {"spec", spec}};
  return out;
}

}  // namespace gpuadmit::policy
