// memory-floor: a GPU job short of host memory is OOMKilled (exit code 137), usually in its DataLoader
// workers, long after it started.
#include <algorithm>
#include <cmath>
#include <optional>

#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

std::optional<double> bytes_per_parameter(std::string_view precision) {
  if (precision == "fp32" || precision == "float32" || precision == "tf32") return 4.0;
  if (precision == "fp16" || precision == "bf16" || precision == "float16" || precision == "bfloat16")
    return 2.0;
  if (precision == "int8" || precision == "fp8") return 1.0;
  if (precision == "int4" || precision == "fp4") return 0.5;
  return std::nullopt;
}

// Rounds bytes up to a whole GiB so the figure reads well and can be pasted into a manifest.
// Annotations bound the estimate to about 10^21 bytes (a quantity's range), so the count of GiB fits an
// int64; the multiplication by 2^30 saturates at the range of a binary quantity.
k8s::Quantity gib_ceil(double bytes) {
  const auto gib =
      static_cast<std::int64_t>(std::ceil(std::min(bytes, 1e22) / static_cast<double>(1LL << 30)));
  return k8s::Quantity::from_units(gib, k8s::Quantity::Format::kBinarySI).times(std::int64_t{1} << 30);
}

}  // namespace

void rule_memory_floor(RuleContext& ctx) {
  const MemoryFloor& cfg = ctx.rules().memory_floor;
  const k8s::Pod& pod = ctx.pod();

  // Model annotations switch the floor from the fixed per-GPU figure to an estimate of what training holds.
  std::optional<k8s::Quantity> estimate;
  std::string how;
  std::string short_how;
  const std::string* params_text = annotation(pod, "gpuadmit.io/model-parameters");
  if (params_text != nullptr) {
    const std::string* precision_text = annotation(pod, "gpuadmit.io/model-precision");
    const std::string* batch_text = annotation(pod, "gpuadmit.io/batch-memory");
    const auto params = parse_parameter_count(*params_text);
    const auto bytes = bytes_per_parameter(precision_text != nullptr ? *precision_text : "fp32");
    std::optional<k8s::Quantity> batch = k8s::Quantity{};
    if (batch_text != nullptr) {
      auto parsed = k8s::Quantity::parse(*batch_text);
      batch = parsed ? std::optional(*parsed) : std::nullopt;
    }
    if (!params || !bytes || !batch) {
      ctx.report(
          cfg.action, "metadata.annotations",
          "the model annotations cannot be read: gpuadmit.io/model-parameters takes a count such as 7B "
          "or 7e9, gpuadmit.io/model-precision one of fp32, tf32, bf16, fp16, fp8, int8, int4, and "
          "gpuadmit.io/batch-memory a quantity such as 2Gi.\nFix: correct the annotations or remove them.",
          "unreadable model annotations (gpuadmit.io/model-parameters, -precision, batch-memory)");
      return;
    }
    const double model = *params * *bytes;
    const double total = (2 * model + batch->approx() + cfg.overhead.approx()) *
                         static_cast<double>(cfg.safety_percent) / 100.0;
    estimate = gib_ceil(total);
    short_how = *params_text + " params " +
                (precision_text != nullptr ? *precision_text : std::string("fp32")) +
                " + batch + overhead, ×" + std::to_string(cfg.safety_percent) + "%";
    how = "model " + human(gib_ceil(model)) + " (" + *params_text + " parameters × " +
          std::to_string(static_cast<int>(*bytes * 8)) + " bits) + gradients " + human(gib_ceil(model)) +
          " + batch " + human(*batch) + " + overhead " + human(cfg.overhead) + ", × " +
          std::to_string(cfg.safety_percent) + "%";
  }

  for (const k8s::Container& c : pod.containers) {
    const std::int64_t gpus = ctx.gpu_units(c);
    if (gpus <= 0) continue;
    const k8s::Quantity floor = estimate ? *estimate : cfg.overhead + cfg.per_gpu.times(gpus);
    const k8s::Quantity* limit = quantity_of(c.resources.limits, "memory");
    if (limit == nullptr) limit = quantity_of(c.resources.requests, "memory");
    if (limit != nullptr && *limit >= floor) continue;
    std::string floor_how = how;
    std::string floor_short = short_how;
    if (!estimate) {
      floor_how = human(cfg.overhead) + " overhead + " + std::to_string(gpus) + " GPU" +
                  (gpus > 1 ? "s" : "") + " × " + human(cfg.per_gpu);
      floor_short = floor_how;
    }
    const std::string have = limit != nullptr ? "a memory limit of " + human(*limit) : "no memory limit";
    ctx.report(
        cfg.action, field_of(c, ".resources.limits.memory"),
        describe(c) + " has " + have + ", below the " + human(floor) + " it needs: " + floor_how +
            ". A GPU job that runs out of host memory is OOMKilled (exit code 137), usually in its "
            "DataLoader workers, long after it started.\nFix:\n    resources:\n      requests: {memory: " +
            human(floor) + "}\n      limits:   {memory: " + human(floor) + "}",
        describe(c) + " memory limit " + (limit != nullptr ? human(*limit) : std::string("unset")) + " < " +
            human(floor) + " needed (" + floor_short + ")");
  }
}

void read_memory_floor(ParameterReader& r, RuleSet& rules) {
  MemoryFloor& p = rules.memory_floor;
  r.action("action", p.action);
  r.quantity("overhead", p.overhead);
  r.quantity("perGpu", p.per_gpu);
  r.integer("safetyPercent", 100, 1000, p.safety_percent);
}

}  // namespace gpuadmit::policy
