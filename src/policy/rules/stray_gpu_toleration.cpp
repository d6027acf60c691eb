// stray-gpu-toleration: a pod that holds no GPU should not tolerate the GPU taint, or it can squat on GPU
// nodes and take the cpu and memory that GPU jobs need there.
#include <algorithm>
#include <string>

#include "../dra_devices.hpp"
#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

// Whether the pod has a DRA claim whose devices the view cannot tell: no view of the DRA kinds, a claim or
// template not in it yet (created a moment later, or by a controller after the pod), or a class it lacks.
// Such a pod may well hold GPUs: NVIDIA's DRA demos tolerate the GPU taint for theirs.
bool unknown_claims(const RuleContext& ctx) {
  const k8s::Pod& pod = ctx.pod();
  if (pod.resource_claims.empty()) return false;
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr || !cluster->dra_listed) return true;
  for (const PodClaim& claim : resolve_claims(pod, cluster)) {
    if (claim.spec == nullptr) return true;
    for (const k8s::DeviceRequest& request : claim.spec->requests) {
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        if (cluster->device_class(sub.device_class) == nullptr) return true;
      }
    }
  }
  return false;
}

}  // namespace

void rule_stray_gpu_toleration(RuleContext& ctx) {
  // A DaemonSet's pods must run on every node, GPU nodes too: the GPU stack (device plugin, feature
  // discovery, DCGM exporter) tolerates the GPU taint and holds no GPU by design.
  if (ctx.is_gpu_pod() || ctx.pod().meta.controller_kind == "DaemonSet" || unknown_claims(ctx)) return;
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
