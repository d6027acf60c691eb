// gpu-memory-fit: a model that does not fit the GPU memory it asks for fails at load time (CUDA out of
// memory), the most common way an inference pod dies. Said at apply time, with how many of which GPU it
// needs and what a smaller precision would take.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "../inference_memory.hpp"
#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

// GPU memory in MiB by product, for nodes without GPU feature discovery's memory label: (all of, MiB), the
// first whose words all occur in the lower-cased product name wins.
struct KnownGpu {
  std::array<std::string_view, 2> words;
  std::int64_t mib = 0;
};
constexpr std::array<KnownGpu, 11> kKnownGpus{{
    {{"h200", ""}, 143771},
    {{"h100", ""}, 81559},
    {{"a100", "80gb"}, 81920},
    {{"a100", ""}, 40960},
    {{"l40", ""}, 46068},
    {{"a10", ""}, 23028},
    {{"l4", ""}, 23034},
    {{"t4", ""}, 15360},
    {{"v100", "32gb"}, 32768},
    {{"v100", ""}, 16384},
    {{"a30", ""}, 24576},
}};

std::optional<std::int64_t> known_mib(std::string product) {
  std::transform(product.begin(), product.end(), product.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const KnownGpu& g : kKnownGpus) {
    if (std::all_of(g.words.begin(), g.words.end(),
                    [&](std::string_view w) { return w.empty() || product.find(w) != std::string::npos; }))
      return g.mib;
  }
  return std::nullopt;
}

// The GPU products of the nodes the pod can use, with their memory per GPU in bytes.
std::map<std::string, double> gpu_memory_by_product(const RuleContext& ctx) {
  const GpuType& cfg = ctx.rules().gpu_type;
  std::map<std::string, double> out;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node& node = ctx.cluster()->nodes[group.first];
    const auto product = node.labels.find(cfg.product_label);
    const std::string name = product != node.labels.end() ? product->second : node.name;
    auto mib = int_label(node, cfg.memory_label);
    if (!mib && product != node.labels.end()) mib = known_mib(product->second);
    if (mib && *mib > 0) out[name] = static_cast<double>(*mib) * static_cast<double>(1 << 20);
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

}  // namespace

void rule_gpu_memory_fit(RuleContext& ctx) {
  const GpuMemoryFit& cfg = ctx.rules().gpu_memory_fit;
  if (!ctx.is_gpu_pod() || ctx.cluster() == nullptr) return;
  auto model = inference_model_of(ctx.pod());
  if (!model) {
    ctx.report(cfg.action, "metadata.annotations",
               model.error().message +
                   ".\nFix: correct the annotation or remove it (docs/policy.md, gpu-memory-fit).",
               model.error().message);
    return;
  }
  if (!*model) return;
  const std::int64_t gpus = ctx.gpu_units();
  const std::map<std::string, double> products = gpu_memory_by_product(ctx);
  if (gpus <= 0 || products.empty()) return;
  const double overhead = cfg.overhead.approx();
  const InferenceEstimate need = inference_gpu_memory(**model, overhead);
  const bool fits = std::any_of(products.begin(), products.end(), [&](const auto& p) {
    return p.second * static_cast<double>(gpus) >= need.total;
  });
  if (fits) return;
  const auto largest = std::max_element(products.begin(), products.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string asked;
  for (const auto& [name, bytes] : products) {
    asked += (asked.empty() ? "" : " or ") + std::to_string(gpus) + "× " + name + " (" + gib_text(bytes) +
             " each)";
  }
  const std::string needs =
      (*model)->name + " " + (*model)->precision + " needs about " + gib_text(need.total) +
      " of GPU memory: " + std::to_string(gpus_needed(need.total, largest->second)) + "× " + largest->first;
  ctx.report(
      cfg.action, "spec.containers",
      needs + smaller_precisions(**model, overhead, largest->first, largest->second) +
          "; this pod asks for " + asked + ". " + need.working +
          ". A model that does not fit fails when it loads (CUDA out of memory).\nFix: ask for more GPUs "
          "(and shard the model across them: tensor parallelism), a GPU with more memory, or serve a "
          "quantized model.",
      needs + "; this pod asks for " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs"));
}

void read_gpu_memory_fit(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_memory_fit.action);
  r.quantity("overhead", rules.gpu_memory_fit.overhead);
}

}  // namespace gpuadmit::policy
