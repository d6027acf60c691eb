// stray-gpu-toleration: a pod that holds no GPU should not tolerate the GPU taint, or it can squat on GPU
// nodes and take the cpu and memory that GPU jobs need there.
#include <algorithm>
#include <string>

#include "../dra_devices.hpp"
#include "../rule_context.hpp"

namespace gpuadmit::policy {

void rule_stray_gpu_toleration(RuleContext& ctx) {
  // A DaemonSet's pods must run on every node, GPU nodes too: the GPU stack (device plugin, feature
  // discovery, DCGM exporter) tolerates the GPU taint and holds no GPU by design.
  if (ctx.is_gpu_pod() || ctx.pod().meta.controller_kind == "DaemonSet" ||
      has_unknown_claims(ctx.pod(), ctx.cluster()))
    return;
  const StrayGpuToleration& cfg = ctx.rules().stray_gpu_toleration;
  const auto& tolerations = ctx.pod().tolerations;
  for (std::size_t i = 0; i < tolerations.size(); ++i) {
    const k8s::Toleration& t = tolerations[i];
    // Wildcard tolerations (empty key) are what DaemonSets use to run everywhere: not a stray GPU toleration.
    if (t.key.empty() ||
        std::find(cfg.taint_keys.begin(), cfg.taint_keys.end(), t.key) == cfg.taint_keys.end()) {
      continue;
    }
    ctx.report(
        cfg.action, "spec.tolerations[" + std::to_string(i) + "]",
        "this pod requests no GPU but tolerates the GPU taint " + t.key +
            ", so it can land on a GPU node and take the cpu and memory that GPU jobs need there.\nFix: "
            "remove the toleration, or request the GPU this pod needs.",
        "pod requests no GPU but tolerates the " + t.key + " taint; it may squat on GPU nodes");
  }
}

void read_stray_gpu_toleration(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.stray_gpu_toleration.action);
  r.strings("taintKeys", rules.stray_gpu_toleration.taint_keys);
}

}  // namespace gpuadmit::policy
