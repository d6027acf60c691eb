// The GPU nodes a pod's resources point at, by group, and their numeric labels: what gpu-type and cuda-driver
// read. A group's nodes share every label but the hostname, so one node tells the labels of all.
#include <charconv>
#include <map>

#include "../rule_context.hpp"

namespace gpuadmit::policy {

// The groups of nodes that offer any of the GPU resources the pod asks for, each once (index lookups, no
// full scan; node by node when the pod names nodes).
std::vector<ClusterSnapshot::NodeGroup> gpu_groups_for(const RuleContext& ctx) {
  std::map<std::size_t, std::size_t> count_by_first;  // a group's first node → its size, in node order
  for (const k8s::Container& c : ctx.pod().containers) {
    for (const auto& [name, q] : c.resources.limits) {
      if (!ctx.rules().is_gpu_resource(name)) continue;
      for (const ClusterSnapshot::NodeGroup& g : candidate_units(*ctx.cluster(), name, ctx.pod()))
        count_by_first.emplace(g.first, g.count);
    }
  }
  std::vector<ClusterSnapshot::NodeGroup> out;
  out.reserve(count_by_first.size());
  for (const auto& [first, count] : count_by_first) out.push_back({first, count});
  return out;
}

std::optional<std::int64_t> int_label(const k8s::Node& node, const std::string& key) {
  const auto it = node.labels.find(key);
  if (it == node.labels.end()) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (ec != std::errc{} || ptr != it->second.data() + it->second.size()) return std::nullopt;
  return value;
}

}  // namespace gpuadmit::policy
