// gpu-whole-units: a fractional GPU, which the API server rejects tersely and the device plugin cannot serve.
#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

// "nvidia.com/mig-1g.10gb" → "10gb": MIG profile names carry their memory.
std::string mig_memory(std::string_view resource) {
  const auto dot = resource.rfind('.');
  return dot == std::string_view::npos ? std::string() : std::string(resource.substr(dot + 1));
}

// How to share a GPU, in this cluster's terms when gpuadmit knows the cluster.
std::string sharing_hint(const RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr) {
    return "To share one GPU, request a MIG slice (for example nvidia.com/mig-1g.10gb: 1) or use GPU "
           "time-slicing "
           "configured in the NVIDIA GPU operator.";
  }
  std::string offered;
  for (const auto& [name, nodes] : cluster->nodes_by_resource) {
    if (!name.starts_with("nvidia.com/mig-")) continue;
    offered += (offered.empty() ? "" : ", ") + name + " (" + mig_memory(name) + ", on " +
               std::to_string(nodes.size()) + (nodes.size() == 1 ? " node)" : " nodes)");
  }
  if (offered.empty()) {
    return "This cluster offers no MIG slices; to share a GPU, ask the cluster admins for MIG or "
           "time-slicing.";
  }
  return "To share a GPU, request one of the MIG slices this cluster offers: " + offered + ".";
}

}  // namespace

void rule_gpu_whole_units(RuleContext& ctx) {
  const Action action = ctx.rules().gpu_whole_units.action;
  const ClusterSnapshot* cluster = ctx.cluster();
  for (const k8s::Container& c : ctx.pod().containers) {
    // A MIG slice no node offers can never be granted either.
    if (cluster != nullptr) {
      for (const auto& [name, q] : c.resources.limits) {
        if (!name.starts_with("nvidia.com/mig-") || !(q > k8s::Quantity{}) ||
            cluster->nodes_by_resource.contains(name)) {
          continue;
        }
        ctx.report(action, field_of(c, ".resources.limits"),
                   describe(c) + " asks for " + name +
                       ", a MIG slice no node in this cluster offers, so it can never "
                       "be scheduled.\n" +
                       sharing_hint(ctx),
                   describe(c) + " asks for " + name + ", which no node offers");
      }
    }
    for (const auto* section : {&c.resources.limits, &c.resources.requests}) {
      const bool is_limit = section == &c.resources.limits;
      for (const auto& [name, q] : *section) {
        if (!ctx.rules().is_gpu_resource(name) || q.is_whole()) continue;
        // Report a fractional request only when the limit does not already carry the same problem.
        if (!is_limit && c.resources.limits.contains(name) && !c.resources.limits.at(name).is_whole())
          continue;
        const std::string field = field_of(c, is_limit ? ".resources.limits" : ".resources.requests");
        ctx.report(action, field,
                   describe(c) + " asks for " + name + ": " + q.to_string() + " (" + human(q) +
                       " of a GPU). GPUs are allocated whole: the API server rejects a fractional GPU and no "
                       "node can ever grant one.\nFix: ask for a whole number of GPUs:\n    resources:\n"
                       "      limits:\n        " +
                       name + ": 1\n" + sharing_hint(ctx),
                   describe(c) + " asks for " + human(q) + " " + name +
                       "; GPUs are allocated whole: ask for 1, or a MIG slice");
      }
    }
  }
}

void read_gpu_whole_units(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_whole_units.action);
}

}  // namespace gpuadmit::policy
