// gpu-tolerations: GPU pods must tolerate the taints of the GPU nodes they can use.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

// True when `existing` tolerates every taint that `wanted` tolerates.
bool covers(const k8s::Toleration& existing, const k8s::Toleration& wanted) {
  if (!existing.effect.empty() && existing.effect != wanted.effect) return false;
  const bool existing_exists = existing.op == "Exists";
  if (existing.key.empty()) return existing_exists;  // an empty key with Exists tolerates every taint
  if (existing.key != wanted.key) return false;
  if (existing_exists) return true;
  return wanted.op != "Exists" && existing.value == wanted.value;
}

nlohmann::json to_json(const k8s::Toleration& t) {
  nlohmann::json out = nlohmann::json::object();
  if (!t.key.empty()) out["key"] = t.key;
  out["operator"] = t.op.empty() ? "Equal" : t.op;
  if (!t.value.empty()) out["value"] = t.value;
  if (!t.effect.empty()) out["effect"] = t.effect;
  if (t.toleration_seconds) out["tolerationSeconds"] = *t.toleration_seconds;
  return out;
}

std::string describe_toleration(const k8s::Toleration& t) {
  std::string out = t.key.empty() ? "every taint" : t.key;
  if (t.op != "Exists" && !t.value.empty()) out += "=" + t.value;
  if (!t.effect.empty()) out += ":" + t.effect;
  return out;
}

// Taints Kubernetes itself manages (node health, control plane) are never GPU taints to tolerate.
bool is_system_taint(const k8s::Taint& t) {
  return t.key.starts_with("node.kubernetes.io/") || t.key.starts_with("node-role.kubernetes.io/") ||
         t.key.starts_with("node.cloudprovider.kubernetes.io/");
}

// With a cluster view: the exact scheduling taints (key, value, effect) of the nodes the pod's GPUs could
// run on (eligible_gpu_groups: the GPU resources and amounts it asks for, its node selector and affinity,
// gpu-type's among them) that make them GPU nodes: a taint every such node carries (without it the pod could
// not run on any of them), or one whose key the policy names as a GPU taint. A taint on only some of them
// (dedicated=inference on the T4 nodes) is the admins' choice to reserve those nodes, and stays untolerated
// unless the pod is narrowed to them.
// With no such node in view (a GPU pool scaled to zero, a selector nobody matches yet) or no view at all:
// the policy's list. An autoscaler never scales up a tainted pool for a pod that does not tolerate it.
std::vector<k8s::Toleration> wanted_tolerations(const RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  const auto& policy_list = ctx.rules().gpu_tolerations.tolerations;
  if (cluster == nullptr) return policy_list;
  const std::vector<ClusterSnapshot::NodeGroup> groups = eligible_gpu_groups(ctx);
  if (groups.empty()) return policy_list;
  const auto policy_key = [&](const std::string& key) {
    return std::any_of(policy_list.begin(), policy_list.end(),
                       [&](const k8s::Toleration& t) { return t.key == key; });
  };
  // How many nodes carry each taint, one group at a time: the nodes of a group share their taints, so
  // 5,000 nodes are a handful of representatives.
  std::size_t usable = 0;
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::size_t, const k8s::Taint*>>
      counts;
  for (const ClusterSnapshot::NodeGroup& group : groups) {
    const k8s::Node& node = cluster->nodes[group.first];
    usable += group.count;
    for (std::size_t j = 0; j < node.taints.size(); ++j) {
      const k8s::Taint& t = node.taints[j];
      if (!k8s::blocks_scheduling(t) || is_system_taint(t)) continue;
      // The API server refuses duplicate taints, but count a node once even if a fake one repeats it.
      const auto before = node.taints.begin() + static_cast<std::ptrdiff_t>(j);
      if (std::find(node.taints.begin(), before, t) != before) continue;
      auto& entry = counts[std::tie(t.key, t.value, t.effect)];
      entry.first += group.count;
      entry.second = &t;
    }
  }
  std::vector<k8s::Toleration> out;
  for (const auto& [key, entry] : counts) {
    if (entry.first != usable && !policy_key(entry.second->key)) continue;
    const k8s::Taint& t = *entry.second;
    out.push_back({t.key, t.value.empty() ? "Exists" : "Equal", t.value, t.effect, std::nullopt});
  }
  // The map's order is (key, value, effect): the patch lists them sorted.
  return out;
}

}  // namespace

void rule_gpu_tolerations(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const GpuTolerations& cfg = ctx.rules().gpu_tolerations;
  const k8s::Pod& pod = ctx.pod();
  const std::vector<k8s::Toleration> wanted_list = wanted_tolerations(ctx);
  std::vector<const k8s::Toleration*> missing;
  for (const k8s::Toleration& wanted : wanted_list) {
    const bool covered = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                     [&](const k8s::Toleration& t) { return covers(t, wanted); });
    if (!covered) missing.push_back(&wanted);
  }
  if (missing.empty()) return;
  if (cfg.action == Action::kEnforce && ctx.can_fix_pod()) {
    for (const k8s::Toleration* t : missing) {
      ctx.append(spec_part("tolerations")) = to_json(*t);
      ctx.fixed("spec.tolerations", "added a toleration for the GPU taint " + describe_toleration(*t));
    }
    return;
  }
  std::string list;
  std::string yaml;
  for (const k8s::Toleration* t : missing) {
    list += (list.empty() ? "" : ", ") + describe_toleration(*t);
    yaml += "\n    - key: " + t->key + "\n      operator: " + (t->op.empty() ? "Equal" : t->op) +
            (t->value.empty() ? "" : "\n      value: \"" + t->value + "\"") +
            (t->effect.empty() ? "" : "\n      effect: " + t->effect);
  }
  ctx.report(
      cfg.action, "spec.tolerations",
      "this GPU pod does not tolerate the GPU node taint " + list +
          ". GPU nodes carry it to keep other work off them, so the pod stays Pending with \"untolerated "
          "taint\".\nFix:\n    tolerations:" +
          yaml,
      "GPU pod does not tolerate " + list + "; it will stay Pending on tainted GPU nodes");
}

void read_gpu_tolerations(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_tolerations.action);
  r.tolerations("tolerations", rules.gpu_tolerations.tolerations);
}

}  // namespace gpuadmit::policy
