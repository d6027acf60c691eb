// gpu-limit-equals-request: a GPU request without a limit, or different from it (the API server rejects
// both for extended resources).
#include "../rule_context.hpp"

namespace gpuadmit::policy {
void rule_gpu_limit_equals_request(RuleContext& ctx) {
  const Action action = ctx.rules().gpu_limit_equals_request.action;
  const bool fix = action == Action::kEnforce && ctx.can_fix();
  for (const k8s::Container& c : ctx.pod().containers) {
    for (const auto& [name, request] : c.resources.requests) {
      if (!ctx.rules().is_gpu_resource(name) || !request.is_whole()) continue;  // fractions: gpu-whole-units
      const auto limit = c.resources.limits.find(name);
      if (limit == c.resources.limits.end()) {
        if (fix) {
          ctx.edit(container_part(c, "resources"))["limits"][name] = request.to_string();
          ctx.fixed(field_of(c, ".resources.limits"), "set " + describe(c) + " limit " + name + ": " +
                                                          request.to_string() + " (equal to its request)");
          continue;
        }
        ctx.report(
            action, field_of(c, ".resources.limits"),
            describe(c) + " requests " + name + ": " + request.to_string() +
                " without a limit. GPUs cannot be overcommitted, so Kubernetes requires the limit and "
                "rejects the pod with \"Limit must be set for non overcommitable resources\".\nFix: set the "
                "limit (the request may then be left out):\n    resources:\n      limits:\n        " +
                name + ": " + request.to_string(),
            describe(c) + " requests " + name + " without a limit; set limits." + name + ": " +
                request.to_string());
        continue;
      }
      if (limit->second.is_whole() && limit->second != request) {
        ctx.report(
            action, field_of(c, ".resources"),
            describe(c) + " requests " + request.to_string() + " " + name + " but limits it to " +
                limit->second.to_string() +
                ". GPUs cannot be overcommitted: request and limit must be "
                "equal, and it is not safe to guess which one you meant.\nFix: set both to the number of "
                "GPUs the program uses, or drop the request and keep only the limit.",
            describe(c) + " has " + name + " request " + request.to_string() + " != limit " +
                limit->second.to_string() + "; make them equal");
      }
    }
  }
}

void read_gpu_limit_equals_request(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_limit_equals_request.action);
}

}  // namespace gpuadmit::policy
