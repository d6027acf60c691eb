// gpu-memory-fit: a model that does not fit the GPU memory it asks for fails at load time (CUDA out of
// memory), the most common way an inference pod dies. Said at apply time, with how many of which GPU it
// needs and what a smaller precision would take.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "../rule_context.hpp"
#include "gpuadmit/policy/gpu_share.hpp"
#include "gpuadmit/policy/inference_memory.hpp"

namespace gpuadmit::policy {
namespace {

// The GPU products of the nodes the pod can use, with their memory per GPU in bytes.
std::map<std::string, double> gpu_memory_by_product(const RuleContext& ctx) {
  const GpuType& cfg = ctx.rules().gpu_type;
  std::map<std::string, double> out;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node& node = ctx.cluster()->nodes[group.first];
    const auto product = node.labels.find(cfg.product_label);
    const std::string name = product != node.labels.end() ? product->second : node.name;
    if (const auto bytes = node_gpu_memory(node, cfg.product_label, cfg.memory_label)) out[name] = *bytes;
  }
  return out;
}

std::int64_t gpus_needed(double bytes, double per_gpu) {
  return static_cast<std::int64_t>(std::ceil(bytes / per_gpu));
}

// "INT8 about 66.2Gi: 1× NVIDIA-A100-SXM4-80GB; INT4 about 33.6Gi: ..."
std::string smaller_precisions(const InferenceModel& model, double overhead, const std::string& largest,
                               double per_gpu) {
  std::string out;
  for (const std::string_view precision : {"int8", "int4"}) {
    const double bytes = *precision_bytes(precision);
    if (bytes >= model.bytes_per_parameter) continue;
    InferenceModel smaller = model;
    smaller.precision = precision;
    smaller.bytes_per_parameter = bytes;
    const double total = inference_gpu_memory(smaller, overhead).total;
    std::string upper(precision);
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out.append("; ").append(upper).append(" about ").append(gib_text(total)).append(": ");
    out.append(std::to_string(gpus_needed(total, per_gpu))).append("× ").append(largest);
  }
  return out;
}

// What the pod's model holds in GPU memory: the peak a profiling run measured
// (gpuadmit.io/measured-peak-memory) over the estimate from the model annotations; nothing when neither is
// there, an error naming the annotation that cannot be read.
struct GpuNeed {
  double bytes = 0;
  std::string what;                     // "Llama-2-70B fp16", "this model"
  std::string working;                  // how the figure was found
  std::optional<InferenceModel> model;  // for the quantized alternatives, when estimated
};

Result<std::optional<GpuNeed>> gpu_need(const k8s::Pod& pod, double overhead) {
  auto model = inference_model_of(pod);
  if (!model) return model.error();
  auto peak = measured_peak_of(pod);
  if (!peak) return peak.error();
  if (*peak) {
    const std::string what = *model ? (*model)->name + " " + (*model)->precision : "this model";
    return std::optional<GpuNeed>(
        GpuNeed{**peak, what, "the measured peak is " + *annotation(pod, "gpuadmit.io/measured-peak-memory"),
                std::nullopt});
  }
  if (!*model) return std::optional<GpuNeed>();
  const InferenceEstimate e = inference_gpu_memory(**model, overhead);
  return std::optional<GpuNeed>(
      GpuNeed{e.total, (*model)->name + " " + (*model)->precision, e.working, std::move(**model)});
}

// The memory share of the first GPU container that names one (a pod's vGPUs come from one device plugin).
std::optional<GpuMemoryShare> memory_share_of(const RuleContext& ctx) {
  for (const k8s::Container& c : ctx.pod().containers) {
    if (ctx.gpu_units(c) <= 0) continue;
    if (auto share = gpu_memory_share(c)) return share;
  }
  return std::nullopt;
}

}  // namespace

void rule_gpu_memory_fit(RuleContext& ctx) {
  const GpuMemoryFit& cfg = ctx.rules().gpu_memory_fit;
  if (!ctx.is_gpu_pod() || ctx.cluster() == nullptr) return;
  const double overhead = cfg.overhead.approx();
  auto need = gpu_need(ctx.pod(), overhead);
  if (!need) {
    ctx.report(cfg.action, "metadata.annotations",
               need.error().message +
                   ".\nFix: correct the annotation or remove it (docs/policy.md, gpu-memory-fit).",
               need.error().message);
    return;
  }
  if (!*need) return;
  const std::int64_t gpus = ctx.gpu_units();
  std::map<std::string, double> products = gpu_memory_by_product(ctx);
  if (gpus <= 0 || products.empty()) return;
  // HAMi and Volcano give each vGPU a share of a GPU's memory: that share is what the model must fit.
  const std::optional<GpuMemoryShare> share = memory_share_of(ctx);
  std::map<std::string, double> whole;
  if (share) {
    whole = products;
    for (auto& [name, bytes] : products) bytes = share->of(bytes);
  }
  const double bytes = (*need)->bytes;
  const bool fits = std::any_of(products.begin(), products.end(),
                                [&](const auto& p) { return p.second * static_cast<double>(gpus) >= bytes; });
  if (fits) return;
  const auto largest = std::max_element(products.begin(), products.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string asked;
  for (const auto& [name, per_gpu] : products) {
    asked +=
        (asked.empty() ? "" : " or ") + std::to_string(gpus) + "× " + name + " (" + gib_text(per_gpu) +
        (share ? " of its " + gib_text(whole[name]) + ", " + share->resource + ": " + share->value : "") +
        " each)";
  }
  const std::string needs = (*need)->what + " needs about " + gib_text(bytes) +
                            " of GPU memory: " + std::to_string(gpus_needed(bytes, largest->second)) + "× " +
                            largest->first;
  const std::string smaller =
      (*need)->model ? smaller_precisions(*(*need)->model, overhead, largest->first, largest->second) : "";
  ctx.report(
      cfg.action, "spec.containers",
      needs + smaller + "; this pod asks for " + asked + ". " + (*need)->working +
          ". A model that does not fit fails when it loads (CUDA out of memory).\nFix: ask for more GPUs "
          "(and shard the model across them: tensor parallelism), a GPU with more memory" +
          (share ? std::string(" (a larger ") + share->resource + ")" : std::string()) +
          ", or serve a quantized model.",
      needs + "; this pod asks for " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs"));
}

void read_gpu_memory_fit(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_memory_fit.action);
  r.quantity("overhead", rules.gpu_memory_fit.overhead);
}

}  // namespace gpuadmit::policy
