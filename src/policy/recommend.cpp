#include "gpuadmit/policy/recommend.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "gpuadmit/policy/inference_memory.hpp"
#include "gpuadmit/policy/training_memory.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

k8s::Quantity whole_gib(std::int64_t gib) {
  return k8s::Quantity::from_units(gib, k8s::Quantity::Format::kBinarySI).times(std::int64_t{1} << 30);
}

// The GPU products to weigh: those of the cluster's nodes (with the most GPUs one node offers), else the
// table of common GPUs.
std::vector<GpuOption> gpu_products(const RuleSet& rules, const ClusterSnapshot* cluster) {
  std::vector<GpuOption> out;
  if (cluster == nullptr) {
    for (const KnownGpu& g : known_gpus()) {
      out.push_back({std::string(g.name), static_cast<double>(g.mib) * 1024 * 1024, 0, 0});
    }
    return out;
  }
  std::map<std::string, GpuOption> by_product;
  for (const std::string& resource : rules.gpu_resources) {
    const auto groups = cluster->groups_by_resource.find(resource);
    if (groups == cluster->groups_by_resource.end()) continue;
    for (const ClusterSnapshot::NodeGroup& group : groups->second) {
      const k8s::Node& node = cluster->nodes[group.first];
      const auto bytes = node_gpu_memory(node, rules.gpu_type.product_label, rules.gpu_type.memory_label);
      const auto product = node.labels.find(rules.gpu_type.product_label);
      const k8s::Quantity* count = quantity_of(node.allocatable, resource);
      if (!bytes || product == node.labels.end() || count == nullptr) continue;
      GpuOption& option = by_product[product->second];
      option.product = product->second;
      option.bytes_per_gpu = *bytes;
      option.per_node = std::max(option.per_node, count->units_ceil());
    }
  }
  for (auto& [name, option] : by_product) out.push_back(std::move(option));
  return out;
}

// How many of each product hold `bytes`, fewest first (then the smaller GPU: the cheaper way to fit). The
// one chosen is the product asked for, else with a cluster the first that fits on one node, else
// kDefaultGpu.
Result<bool> weigh_gpus(double bytes, std::vector<GpuOption>& options, const std::string& product,
                        bool from_cluster, Recommendation& out) {
  for (GpuOption& o : options) {
    o.gpus = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(bytes / o.bytes_per_gpu)));
  }
  std::stable_sort(options.begin(), options.end(), [](const GpuOption& a, const GpuOption& b) {
    return a.gpus != b.gpus ? a.gpus < b.gpus : a.bytes_per_gpu < b.bytes_per_gpu;
  });
  std::string line = "  GPUs: ";
  std::string names;
  for (const GpuOption& o : options) {
    line += (&o == options.data() ? "" : "; ") + std::to_string(o.gpus) + "× " + o.product + " (" +
            gib_text(o.bytes_per_gpu) + " each" +
            (o.per_node > 0 && o.gpus > o.per_node ? ", more than one node has: " + std::to_string(o.per_node)
                                                   : std::string()) +
            ")";
    names += (names.empty() ? "" : ", ") + o.product;
  }
  out.working.push_back(line);
  out.options = options;
  const std::string wanted = lower(product.empty() && !from_cluster ? std::string(kDefaultGpu) : product);
  // A name given in full wins over names that contain it ("a10" is the A10, not the A100).
  auto chosen = std::find_if(options.begin(), options.end(), [&](const GpuOption& o) {
    return !wanted.empty() && lower(o.product) == wanted;
  });
  if (chosen == options.end()) {
    chosen = std::find_if(options.begin(), options.end(), [&](const GpuOption& o) {
      if (!wanted.empty()) return lower(o.product).find(wanted) != std::string::npos;
      return o.per_node == 0 || o.gpus <= o.per_node;
    });
  }
  if (chosen == options.end() && !wanted.empty()) {
    return make_error("no GPU product here is named like \"" + product + "\"; the products: " + names);
  }
  const GpuOption& pick = chosen != options.end() ? *chosen : options.front();
  out.gpu = pick;
  out.gpus = pick.gpus;
  out.working.push_back(
      "  sized for " + pick.product +
      (product.empty() && !from_cluster ? " (--gpu or --cluster for another)" : std::string()));
  if (pick.per_node > 0 && pick.gpus > pick.per_node) {
    out.working.emplace_back("  no node has that many GPUs: serve it across nodes, or quantize it");
  }
  return true;
}

// GPU memory: the measured peak, else the serving estimate; nothing for a training job without a peak.
Result<std::optional<double>> gpu_memory_need(const k8s::Pod& pod, const RuleSet& rules,
                                              Recommendation& out) {
  auto served = inference_model_of(pod);
  if (!served) return served.error();
  auto peak = measured_peak_of(pod);
  if (!peak) return peak.error();
  if (*peak) {
    out.working.push_back("GPU memory: the measured peak, " +
                          *annotation(pod, "gpuadmit.io/measured-peak-memory"));
    return *peak;
  }
  if (!*served) return std::optional<double>();
  const InferenceEstimate e = inference_gpu_memory(**served, rules.gpu_memory_fit.overhead.approx());
  out.working.push_back("GPU memory: " + e.working + " = " + gib_text(e.total));
  return std::optional<double>(e.total);
}

// Host memory: the training estimate (memory-floor's), else memory-floor's fixed floor for the GPUs.
Result<bool> host_memory(const k8s::Pod& pod, const RuleSet& rules, Recommendation& out) {
  const MemoryFloor& floor = rules.memory_floor;
  auto training = training_model_of(pod);
  if (!training) return training.error();
  if (*training) {
    const TrainingEstimate e =
        training_host_memory(**training, floor.overhead.approx(), floor.safety_percent);
    out.memory = whole_gib(e.gib);
    out.working.push_back("host memory: " + e.working + " → " + human(out.memory));
    const CheckpointPvc& cp = rules.checkpoint_pvc;
    auto checkpoints = checkpoint_model_of(pod.meta.annotations, cp.checkpoints_kept);
    if (!checkpoints) return checkpoints.error();
    const CheckpointEstimate c = checkpoint_bytes(**checkpoints);
    const double with_headroom = c.bytes * static_cast<double>(cp.headroom_percent) / 100.0;
    const k8s::Quantity estimate =
        whole_gib(static_cast<std::int64_t>(std::ceil(std::min(with_headroom, 1e22) / kBytesPerGiB)));
    out.checkpoint_claim = std::max(estimate, cp.minimum);
    out.working.push_back(
        "checkpoints: " + c.working + " × " + std::to_string(cp.headroom_percent) +
        "% headroom = " + human(estimate) +
        (estimate < cp.minimum ? "; the policy minimum " + human(cp.minimum) : std::string()));
    return true;
  }
  out.memory = floor.overhead + floor.per_gpu.times(out.gpus);
  out.working.push_back("host memory: memory-floor's " + human(floor.overhead) + " overhead + " +
                        std::to_string(out.gpus) + " GPU" + (out.gpus > 1 ? "s" : "") + " × " +
                        human(floor.per_gpu));
  return true;
}

std::string model_name(const k8s::Pod& pod) {
  const std::string* family = annotation(pod, "gpuadmit.io/model-family");
  const std::string* parameters = annotation(pod, "gpuadmit.io/model-parameters");
  const std::string* precision = annotation(pod, "gpuadmit.io/model-precision");
  const std::string* mode = annotation(pod, "gpuadmit.io/model-mode");
  const bool served = mode != nullptr && *mode == "inference";
  std::string name = family != nullptr ? *family : parameters != nullptr ? *parameters : "the model";
  if (family != nullptr && parameters != nullptr) name += " (" + *parameters + ")";
  name += " " + (precision != nullptr ? *precision : served ? "fp16" : "fp32");
  return name + (served ? ", served" : ", training");
}

}  // namespace

Result<Recommendation> recommend(const k8s::Pod& pod, const RuleSet& rules, const ClusterSnapshot* cluster,
                                 const RecommendFor& target) {
  const std::int64_t gpus = target.gpus;
  if (annotation(pod, "gpuadmit.io/model-parameters") == nullptr &&
      annotation(pod, "gpuadmit.io/model-family") == nullptr &&
      annotation(pod, "gpuadmit.io/measured-peak-memory") == nullptr) {
    return Error{
        "no model to size: give gpuadmit.io/model-parameters or gpuadmit.io/model-family (flags "
        "--parameters, --family), or a measured peak",
        {}};
  }
  const std::string* mode = annotation(pod, "gpuadmit.io/model-mode");
  if (annotation(pod, "gpuadmit.io/model-family") != nullptr && (mode == nullptr || *mode != "inference")) {
    return Error{
        "annotation gpuadmit.io/model-family names a served model's shape; set gpuadmit.io/model-mode: "
        "inference (--mode inference), or give gpuadmit.io/model-parameters for a training job",
        {}};
  }
  Recommendation out;
  out.model = model_name(pod);
  if (gpus > 0) out.gpus = gpus;
  auto need = gpu_memory_need(pod, rules, out);
  if (!need) return need.error();
  if (*need) {
    std::vector<GpuOption> options = gpu_products(rules, cluster);
    if (options.empty()) {
      out.working.emplace_back("  no GPU product with a known memory to weigh it against");
    } else if (auto weighed = weigh_gpus(**need, options, target.product, cluster != nullptr, out);
               !weighed) {
      return weighed.error();
    }
    if (gpus > 0 && gpus != out.gpus) {
      out.working.push_back("  --gpus " + std::to_string(gpus) + " given: kept, though the memory says " +
                            std::to_string(out.gpus));
      out.gpus = gpus;
    }
  }
  if (auto host = host_memory(pod, rules, out); !host) return host.error();
  out.cpu = rules.guaranteed_qos.cpu_per_gpu.times(out.gpus);
  out.working.push_back("cpu: guaranteed-qos's " + human(rules.guaranteed_qos.cpu_per_gpu) + " per GPU");
  out.shm = shm_share(rules.shm_size, out.memory);
  out.working.push_back("/dev/shm: shm-size's " + std::to_string(rules.shm_size.percent_of_memory) +
                        "% of the memory limit, within [" + human(rules.shm_size.minimum) + ", " +
                        human(rules.shm_size.maximum) + "]");
  return out;
}

}  // namespace gpuadmit::policy
