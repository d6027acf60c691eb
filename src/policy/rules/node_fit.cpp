// node-fit: a pod no node can ever run is denied at admission with a scheduler-like breakdown, instead of
// sitting Pending with "0/N nodes are available".
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

// Why one node cannot run the pod, as a key that groups nodes with the same reason. `present` caches, per
// label key, the values the cluster has: computing them scans every node, so once per key, not per node
// (a selector nobody matches would otherwise cost nodes² label lookups).
std::string selector_reason(const k8s::Pod& pod, const k8s::Node& node, const ClusterSnapshot& cluster,
                            std::map<std::string, std::string, std::less<>>& present) {
  for (const auto& [key, value] : pod.node_selector) {
    const auto it = node.labels.find(key);
    if (it != node.labels.end() && it->second == value) continue;
    auto cached = present.find(key);
    if (cached == present.end()) {
      // Nodes of a group share every label but the hostname: one node per group tells the other values.
      std::set<std::string> values;
      const auto add = [&](const k8s::Node& n) {
        if (const auto label = n.labels.find(key); label != n.labels.end()) values.insert(label->second);
      };
      if (key == "kubernetes.io/hostname") {
        for (const k8s::Node& n : cluster.nodes) add(n);
      } else {
        for (const ClusterSnapshot::NodeGroup& g : cluster.node_groups) add(cluster.nodes[g.first]);
      }
      std::string list;
      for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
      cached = present.emplace(key, list.empty() ? "none" : list).first;
    }
    return "not match nodeSelector " + key + "=" + value + " (present: " + cached->second + ")";
  }
  return "not match the pod's required node affinity";
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

void rule_node_fit(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr || !ctx.is_gpu_pod()) return;
  const k8s::Pod& pod = ctx.pod();
  k8s::ResourceList wanted = effective_requests(pod);
  erase_if(wanted, [](const auto& e) { return !(e.second > k8s::Quantity{}); });
  wanted["pods"] = k8s::Quantity::from_units(1);

  // Candidates come from the index of the pod's first GPU resource; the other nodes lack it outright.
  const auto gpu = std::find_if(wanted.begin(), wanted.end(),
                                [&](const auto& e) { return ctx.rules().is_gpu_resource(e.first); });
  static const std::vector<std::size_t> kNone;
  const auto indexed =
      gpu != wanted.end() ? cluster->nodes_by_resource.find(gpu->first) : cluster->nodes_by_resource.end();
  const std::vector<std::size_t>& candidates =
      indexed != cluster->nodes_by_resource.end() ? indexed->second : kNone;

  if (gpu != wanted.end() && candidates.empty()) {
    const Action action = std::min(ctx.rules().node_fit.action, ctx.rules().node_fit.no_node_offers);
    ctx.report(
        action, "spec",
        "no node offers " + gpu->first + " right now (" + plural(cluster->nodes.size(), "node", "nodes") +
            " in the cluster). If a node pool scales up from zero (cluster-autoscaler, Karpenter), the pod "
            "waits Pending until a node arrives; otherwise it waits forever.\nFix: check that the GPU node "
            "pool exists and can scale, or that the resource name is right.",
        "no node offers " + gpu->first + " now; the pod stays Pending until a GPU node pool scales up");
    return;
  }

  // One check per group of indistinguishable nodes (ClusterSnapshot::NodeGroup), weighted by its size; node
  // by node only when the pod singles nodes out by name, which groups do not keep apart.
  const std::vector<ClusterSnapshot::NodeGroup> units = gpu != wanted.end()
                                                            ? candidate_units(*cluster, gpu->first, pod)
                                                            : std::vector<ClusterSnapshot::NodeGroup>{};

  std::map<std::string, std::size_t> reasons;
  std::map<std::string, std::string, std::less<>> present_values;  // selector_reason's cache
  for (const auto& [i, weight] : units) {
    const k8s::Node& node = cluster->nodes[i];
    std::string reason;
    if (node.unschedulable) {
      reason = "cordoned";
    } else if (!node.ready) {
      reason = "not Ready";
    } else {
      // The scheduler's filter order: taints (TaintToleration) before NodeAffinity before NodeResourcesFit.
      const auto taint = std::find_if(node.taints.begin(), node.taints.end(), [&](const k8s::Taint& t) {
        return k8s::blocks_scheduling(t) && !k8s::tolerated_by_any(pod.tolerations, t);
      });
      if (taint != node.taints.end()) {
        reason =
            "taint|" + taint->key + (taint->value.empty() ? "" : "=" + taint->value) + ":" + taint->effect;
      } else if (!k8s::node_selector_matches(pod, node)) {
        reason = "do not match|" + selector_reason(pod, node, *cluster, present_values);
      } else {
        for (const auto& [name, amount] : wanted) {
          const auto have = node.allocatable.find(name);
          const k8s::Quantity available = have == node.allocatable.end() ? k8s::Quantity{} : have->second;
          if (available < amount) {
            reason = "short|" + name + "|" + available.to_string() + "|" + amount.to_string();
            break;
          }
        }
      }
    }
    if (reason.empty()) return;  // this node can run the pod
    reasons[reason] += weight;
  }

  // No node fits: the breakdown, largest groups first.
  std::vector<std::pair<std::size_t, std::string>> groups;
  if (gpu != wanted.end() && cluster->nodes.size() > candidates.size()) {
    const std::size_t lacking = cluster->nodes.size() - candidates.size();
    groups.emplace_back(lacking, plural(lacking, "node lacks ", "nodes lack ") + gpu->first);
  }
  for (const auto& [key, count] : reasons) {
    const std::string nodes = plural(count, "node", "nodes");
    std::string text;
    if (key == "cordoned") {
      text = nodes + (count == 1 ? " is" : " are") + " cordoned";
    } else if (key == "not Ready") {
      text = nodes + (count == 1 ? " is" : " are") + " not Ready";
    } else if (key.starts_with("do not match|")) {
      text = nodes + (count == 1 ? " does " : " do ") + key.substr(13);
    } else if (key.starts_with("taint|")) {
      text = nodes + (count == 1 ? " has" : " have") + " the taint " + key.substr(6) +
             ", which the pod does not tolerate";
    } else if (key.starts_with("short|")) {
      const auto a = key.find('|', 6);
      const auto b = key.find('|', a + 1);
      const std::string name = key.substr(6, a - 6);
      text = nodes + (count == 1 ? " has " : " have ") + key.substr(a + 1, b - a - 1) + " " + name +
             ", the pod asks for " + key.substr(b + 1);
    }
    groups.emplace_back(count, std::move(text));
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string breakdown;
  for (const auto& [count, text] : groups) breakdown += (breakdown.empty() ? "" : "; ") + text;
  if (cluster->nodes.empty()) breakdown = "the cluster has no nodes";

  std::string asks;
  for (const auto& [name, amount] : wanted) {
    if (name != "pods") asks += (asks.empty() ? "" : ", ") + name + " " + amount.to_string();
  }
  ctx.report(
      ctx.rules().node_fit.action, "spec",
      "no node can run this pod: " + breakdown + ".\nThe pod asks for " + asks +
          " (allocatable capacity counts, not current use: no node could run it even when empty), so the "
          "scheduler would leave it Pending.\nFix: ask for what one node has, relax the node selector or "
          "affinity, or add the toleration the GPU nodes need.",
      "no node can run this pod: " + breakdown);
}

void read_node_fit(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.node_fit.action);
  r.action("noNodeOffers", rules.node_fit.no_node_offers);
}

}  // namespace gpuadmit::policy
