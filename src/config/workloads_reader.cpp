#include "workloads_reader.hpp"

namespace gpuadmit::config {
namespace {

std::optional<policy::Factor> read_factor(YamlReader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) {
    r.error(node, path, "expected a count: a number, a member path such as replicas, or $.spec.replicas");
    return std::nullopt;
  }
  policy::Factor f;
  if (auto error = policy::parse_factor(node.Scalar(), f)) {
    r.error_at(node, error->offset, path, error->what);
    return std::nullopt;
  }
  return f;
}

std::optional<policy::FieldRef> read_field(YamlReader& r, const YAML::Node& node, const std::string& path) {
  auto f = read_factor(r, node, path);
  if (!f) return std::nullopt;
  if (!f->ref || f->minus != 0) {
    r.error(node, path, "expected the member path of a bound, such as minReplicas");
    return std::nullopt;
  }
  return f->ref;
}

// `replicas`: a count, or {count, absent, min, max, times}.
void read_replicas(YamlReader& r, const YAML::Node& node, const std::string& path, policy::Replicas& out) {
  if (!node.IsMap()) {
    out.count = read_factor(r, node, path);
    return;
  }
  if (!r.map(node, path, {"count", "absent", "min", "max", "times"})) return;
  if (!node["count"]) r.error(node, path, "expected count: the member that says how many pods run");
  if (node["count"]) out.count = read_factor(r, node["count"], path + ".count");
  if (node["absent"]) assign(out.absent, r.integer(node["absent"], path + ".absent", 0, 1'000'000'000));
  if (node["min"]) out.min = read_field(r, node["min"], path + ".min");
  if (node["max"]) out.max = read_field(r, node["max"], path + ".max");
  if (const YAML::Node times = node["times"]) {
    if (!times.IsSequence()) {
      r.error(times, path + ".times", "expected a list of counts to multiply by");
      return;
    }
    for (std::size_t i = 0; i < times.size(); ++i) {
      if (auto f = read_factor(r, times[i], path + ".times[" + std::to_string(i) + "]"))
        out.times.push_back(*f);
    }
  }
}

// A podSpec's list of refs (`containers`, `fields`, `metadata`, `partialIf`): "@", members of the object,
// and where `root` allows, "$.path" from the object's root.
void read_refs(YamlReader& r, const YAML::Node& n, const std::string& p, const char* key, bool pod_spec,
               bool root, std::vector<policy::FieldRef>& out) {
  const YAML::Node node = n[key];
  if (!node) return;
  const std::string path = p + "." + key;
  if (!pod_spec)
    r.error(node, path, std::string(key) + ": the keys of an assembled pod go with podSpec, not template");
  for (const std::string& text : r.strings(node, path)) {
    policy::FieldRef ref;
    if (policy::parse_field_ref(text, ref) || (ref.from_root && !root)) {
      r.error(node, path,
              std::string("expected ") +
                  (root ? "@, member paths of the podSpec object or $.paths"
                        : "@ or member paths of the podSpec object, such as model") +
                  ", not " + text);
    } else {
      out.push_back(std::move(ref));
    }
  }
}

// One place pods come from: `template` or `podSpec` (a path) and `replicas`, in an entry or in its `pods`
// list; a podSpec's `containers` and `partial`.
void read_site(YamlReader& r, const YAML::Node& n, const std::string& p, policy::WorkloadPod& pod) {
  if (n["name"]) assign(pod.name, r.string(n["name"], p + ".name"));
  pod.pod_spec = static_cast<bool>(n["podSpec"]);
  const std::string key = pod.pod_spec ? "podSpec" : "template";
  if (n["template"] && n["podSpec"]) {
    r.error(n, p, "expected one of template (a pod template) and podSpec (a PodSpec-like object), not both");
  } else if (!n[key]) {
    r.error(n, p, "expected template: the path of the pod template, such as spec.template");
  } else if (auto text = r.string(n[key], p + "." + key)) {
    if (auto error = policy::parse_workload_path(*text, pod.path)) {
      r.error_at(n[key], error->offset, p + "." + key,
                 error->what +
                     " (a path such as spec.template, spec.*ReplicaSpecs.*.template or "
                     "spec.workerGroupSpecs[groupName=*].template)");
    }
  }
  if (n["replicas"]) read_replicas(r, n["replicas"], p + ".replicas", pod.replicas);
  read_refs(r, n, p, "containers", pod.pod_spec, false, pod.containers);
  read_refs(r, n, p, "fields", pod.pod_spec, true, pod.fields);
  read_refs(r, n, p, "metadata", pod.pod_spec, true, pod.metadata);
  read_refs(r, n, p, "partialIf", pod.pod_spec, true, pod.partial_if);
  if (const YAML::Node resources = n["resources"]) {
    if (!pod.pod_spec)
      r.error(resources, p + ".resources",
              "resources: the keys of an assembled pod go with podSpec, not template");
    if (auto member = r.string(resources, p + ".resources")) {
      policy::FieldRef ref;
      if (policy::parse_field_ref(*member, ref) || ref.from_root || ref.members.size() != 1) {
        r.error(resources, p + ".resources",
                "expected the containers' member that holds requests and limits, such as computeResources");
      } else {
        pod.resources = *member;
      }
    }
  }
  if (const YAML::Node partial = n["partial"]) {
    const auto text = r.string(partial, p + ".partial");
    if (text && *text != "true" && *text != "false")
      r.error(partial, p + ".partial", "expected true or false");
    pod.partial = text && *text == "true";
  }
}

void read_pods(YamlReader& r, const YAML::Node& node, const std::string& path, policy::WorkloadKind& kind) {
  if (!node.IsSequence() || node.size() == 0) {
    r.error(node, path, "expected a list of pod templates, each {template or podSpec, name, replicas}");
    return;
  }
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (!r.map(node[i], p,
               {"template", "podSpec", "name", "replicas", "containers", "resources", "fields", "metadata",
                "partial", "partialIf"}))
      continue;
    policy::WorkloadPod pod;
    read_site(r, node[i], p, pod);
    kind.pods.push_back(std::move(pod));
  }
}

}  // namespace

void read_workloads(YamlReader& r, const YAML::Node& node, policy::RuleSet& rules) {
  const std::string path = "spec.workloads";
  if (!node.IsSequence()) {
    r.error(node, path, "expected a list of workload kinds");
    return;
  }
  rules.workloads.clear();
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const YAML::Node n = node[i];
    if (!r.map(n, p, {"apiGroup", "kinds", "template", "replicas", "pods", "concurrent"})) continue;
    policy::WorkloadKind kind;
    if (n["apiGroup"]) assign(kind.api_group, r.string(n["apiGroup"], p + ".apiGroup"));
    if (n["kinds"]) kind.kinds = r.strings(n["kinds"], p + ".kinds");
    if (kind.kinds.empty()) r.error(n, p, "expected kinds: a list of at least one kind");
    if (const YAML::Node concurrent = n["concurrent"]) {
      const auto text = r.string(concurrent, p + ".concurrent");
      if (text && *text != "true" && *text != "false")
        r.error(concurrent, p + ".concurrent", "expected true or false");
      kind.concurrent = !text || *text != "false";
    }
    for (const std::string& k : kind.kinds) {
      if (k == "Pod" || k == "PersistentVolumeClaim")
        r.error(n["kinds"], p + ".kinds", k + " is judged as itself, not as a workload");
    }
    if (n["pods"]) {
      if (n["template"] || n["replicas"]) {
        r.error(n, p, "template and replicas go inside each pods entry when pods is set");
      }
      read_pods(r, n["pods"], p + ".pods", kind);
    } else {
      policy::WorkloadPod pod;
      read_site(r, n, p, pod);
      kind.pods.push_back(std::move(pod));
    }
    rules.workloads.push_back(std::move(kind));
  }
}

}  // namespace gpuadmit::config
