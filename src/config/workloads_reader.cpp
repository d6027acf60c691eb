#include "workloads_reader.hpp"

namespace gpuadmit::config {
namespace {

// A dotted path such as spec.template or spec.*ReplicaSpecs.*.template: no empty step.
bool is_dotted_path(const std::string& path) {
  return !path.empty() && path.front() != '.' && path.back() != '.' && path.find("..") == std::string::npos;
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
    if (!r.map(n, p, {"apiGroup", "kinds", "template", "replicas"})) continue;
    policy::WorkloadKind kind;
    if (n["apiGroup"]) assign(kind.api_group, r.string(n["apiGroup"], p + ".apiGroup"));
    if (n["kinds"]) kind.kinds = r.strings(n["kinds"], p + ".kinds");
    if (n["template"]) assign(kind.template_path, r.string(n["template"], p + ".template"));
    if (n["replicas"]) assign(kind.replicas, r.string(n["replicas"], p + ".replicas"));
    if (kind.kinds.empty()) r.error(n, p, "expected kinds: a list of at least one kind");
    for (const std::string& k : kind.kinds) {
      if (k == "Pod" || k == "PersistentVolumeClaim")
        r.error(n["kinds"], p + ".kinds", k + " is judged as itself, not as a workload");
    }
    if (!is_dotted_path(kind.template_path)) {
      r.error(n["template"] ? n["template"] : n, p + ".template",
              "expected the dotted path of the pod template, such as spec.template or "
              "spec.*ReplicaSpecs.*.template");
    }
    if (kind.replicas.find('.') != std::string::npos) {
      r.error(n["replicas"], p + ".replicas",
              "expected a member name of the template's parent, such as replicas");
    }
    rules.workloads.push_back(std::move(kind));
  }
}

}  // namespace gpuadmit::config
