// The GPU nodes a pod's resources point at, and their numeric labels: what gpu-type and cuda-driver read.
#include <charconv>
#include <set>

#include "../rule_context.hpp"

namespace gpuadmit::policy {

// Nodes that offer any of the GPU resources the pod asks for (index lookups, no full scan).
std::vector<const k8s::Node*> gpu_nodes_for(const RuleContext& ctx) {
  std::set<std::size_t> positions;
  for (const k8s::Container& c : ctx.pod().containers) {
    for (const auto& [name, q] : c.resources.limits) {
      if (!ctx.rules().is_gpu_resource(name)) continue;
      if (const auto it = ctx.cluster()->nodes_by_resource.find(name);
          it != ctx.cluster()->nodes_by_resource.end()) {
        positions.insert(it->second.begin(), it->second.end());
      }
    }
  }
  std::vector<const k8s::Node*> out;
  out.reserve(positions.size());
  for (const std::size_t i : positions) out.push_back(&ctx.cluster()->nodes[i]);
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
