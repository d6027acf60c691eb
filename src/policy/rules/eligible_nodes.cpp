// Which nodes a GPU pod could run on, as far as its GPUs and its placement say. Shared by the rules that
// size or tolerate for those nodes (guaranteed-qos, gpu-tolerations) and node-fit, which names nodes.
#include <algorithm>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {

bool names_nodes(const k8s::Pod& pod) {
  if (pod.node_selector.contains("kubernetes.io/hostname")) return true;
  return std::any_of(
      pod.required_node_terms.begin(), pod.required_node_terms.end(), [](const k8s::NodeSelectorTerm& t) {
        return !t.match_fields.empty() || std::any_of(t.match_expressions.begin(), t.match_expressions.end(),
                                                      [](const k8s::NodeSelectorRequirement& r) {
                                                        return r.key == "kubernetes.io/hostname";
                                                      });
      });
}

k8s::ResourceList gpu_requests(const RuleContext& ctx) {
  k8s::ResourceList gpus = effective_requests(ctx.pod());
  erase_if(gpus, [&](const auto& e) {
    return !ctx.rules().is_gpu_resource(e.first) || !(e.second > k8s::Quantity{});
  });
  return gpus;
}

std::vector<ClusterSnapshot::NodeGroup> candidate_units(const ClusterSnapshot& cluster,
                                                        std::string_view resource, const k8s::Pod& pod) {
  const auto grouped = cluster.groups_by_resource.find(resource);
  if (grouped != cluster.groups_by_resource.end() && !names_nodes(pod)) return grouped->second;
  std::vector<ClusterSnapshot::NodeGroup> units;
  if (const auto it = cluster.nodes_by_resource.find(resource); it != cluster.nodes_by_resource.end()) {
    units.reserve(it->second.size());
    for (const std::size_t i : it->second) units.push_back({i, 1});
  }
  return units;
}

std::vector<ClusterSnapshot::NodeGroup> eligible_gpu_groups(const RuleContext& ctx) {
  std::vector<ClusterSnapshot::NodeGroup> out;
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr) return out;
  const k8s::ResourceList gpus = gpu_requests(ctx);
  const k8s::Pod& pod = ctx.pod();
  if (gpus.empty()) {
    // GPUs from DRA claims: the nodes that have devices of their classes, by device group.
    for (const auto& [group, devices] : ctx.dra_gpu_nodes()) {
      const k8s::Node& node = cluster->nodes[group.first];
      if (!node.unschedulable && node.ready && k8s::node_selector_matches(pod, node)) out.push_back(group);
    }
    return out;
  }
  // Candidates come from the index of the pod's first GPU resource; the other nodes lack it outright.
  for (const ClusterSnapshot::NodeGroup& group : candidate_units(*cluster, gpus.begin()->first, pod)) {
    const k8s::Node& node = cluster->nodes[group.first];
    if (node.unschedulable || !node.ready || !k8s::node_selector_matches(pod, node)) continue;
    const bool holds = std::all_of(gpus.begin(), gpus.end(), [&](const auto& wanted) {
      const auto have = node.allocatable.find(wanted.first);
      return have != node.allocatable.end() && have->second >= wanted.second;
    });
    if (holds) out.push_back(group);
  }
  return out;
}

}  // namespace gpuadmit::policy
