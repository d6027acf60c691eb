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

// The model the annotations describe (gpuadmit.io/model-parameters, -precision, batch-memory).
struct Model {
  std::string parameters_text;  // as annotated: "7B"
  std::string precision;        // fp32 when not annotated
  double parameters = 0;
  double bytes_per_parameter = 0;
  k8s::Quantity batch;

  [[nodiscard]] double bytes() const { return parameters * bytes_per_parameter; }
};

// Nothing when an annotation cannot be read.
std::optional<Model> model_of(const k8s::Pod& pod, const std::string& parameters_text) {
  const std::string* precision = annotation(pod, "gpuadmit.io/model-precision");
  const std::string* batch_text = annotation(pod, "gpuadmit.io/batch-memory");
  Model model{parameters_text, precision != nullptr ? *precision : "fp32", 0, 0, {}};
  const auto parameters = parse_parameter_count(parameters_text);
  const auto bytes = bytes_per_parameter(model.precision);
  if (!parameters || !bytes) return std::nullopt;
  if (batch_text != nullptr) {
    auto batch = k8s::Quantity::parse(*batch_text);
    if (!batch) return std::nullopt;
    model.batch = *batch;
  }
  model.parameters = *parameters;
  model.bytes_per_parameter = *bytes;
  return model;
}

// What a container must hold, and how that was worked out (in full, and short enough for a warning).
struct Floor {
  k8s::Quantity amount;
  std::string how;
  std::string short_how;
};

// Training holds the weights, their gradients and a batch, over the fixed overhead, with a safety margin.
Floor model_floor(const Model& model, const MemoryFloor& cfg) {
  const double total = (2 * model.bytes() + model.batch.approx() + cfg.overhead.approx()) *
                       static_cast<double>(cfg.safety_percent) / 100.0;
  const std::string safety = std::to_string(cfg.safety_percent) + "%";
  const std::string weights = human(gib_ceil(model.bytes()));
  return {gib_ceil(total),
          "model " + weights + " (" + model.parameters_text + " parameters × " +
              std::to_string(static_cast<int>(model.bytes_per_parameter * 8)) + " bits) + gradients " +
              weights + " + batch " + human(model.batch) + " + overhead " + human(cfg.overhead) + ", × " +
              safety,
          model.parameters_text + " params " + model.precision + " + batch + overhead, ×" + safety};
}

// Without model annotations: the overhead and so much per GPU.
k8s::Quantity fixed_floor(const MemoryFloor& cfg, std::int64_t gpus) {
  return cfg.overhead + cfg.per_gpu.times(gpus);
}

Floor explained_fixed_floor(const MemoryFloor& cfg, std::int64_t gpus) {
  std::string how = human(cfg.overhead) + " overhead + " + std::to_string(gpus) + " GPU" +
                    (gpus > 1 ? "s" : "") + " × " + human(cfg.per_gpu);
  return {fixed_floor(cfg, gpus), how, how};
}

void report_unreadable(RuleContext& ctx) {
  ctx.report(ctx.rules().memory_floor.action, "metadata.annotations",
             "the model annotations cannot be read: gpuadmit.io/model-parameters takes a count such as 7B "
             "or 7e9, gpuadmit.io/model-precision one of fp32, tf32, bf16, fp16, fp8, int8, int4, and "
             "gpuadmit.io/batch-memory a quantity such as 2Gi.\nFix: correct the annotations or remove them.",
             "unreadable model annotations (gpuadmit.io/model-parameters, -precision, batch-memory)");
}

void report_short(RuleContext& ctx, const k8s::Container& c, const k8s::Quantity* limit, const Floor& floor) {
  const std::string have = limit != nullptr ? "a memory limit of " + human(*limit) : "no memory limit";
  const std::string need = human(floor.amount);
  ctx.report(
      ctx.rules().memory_floor.action, field_of(c, ".resources.limits.memory"),
      describe(c) + " has " + have + ", below the " + need + " it needs: " + floor.how +
          ". A GPU job that runs out of host memory is OOMKilled (exit code 137), usually in its "
          "DataLoader workers, long after it started.\nFix:\n    resources:\n      requests: {memory: " +
          need + "}\n      limits:   {memory: " + need + "}",
      describe(c) + " memory limit " + (limit != nullptr ? human(*limit) : std::string("unset")) + " < " +
          need + " needed (" + floor.short_how + ")");
}

}  // namespace

void rule_memory_floor(RuleContext& ctx) {
  const MemoryFloor& cfg = ctx.rules().memory_floor;
  // Model annotations switch the floor from the fixed per-GPU figure to an estimate of what training holds.
  std::optional<Floor> estimate;
  if (const std::string* parameters = annotation(ctx.pod(), "gpuadmit.io/model-parameters")) {
    const std::optional<Model> model = model_of(ctx.pod(), *parameters);
    if (!model) {
      report_unreadable(ctx);
      return;
    }
    estimate = model_floor(*model, cfg);
  }
  for (const k8s::Container& c : ctx.pod().containers) {
    const std::int64_t gpus = ctx.gpu_units(c);
    if (gpus <= 0) continue;
    const k8s::Quantity* limit = quantity_of(c.resources.limits, "memory");
    if (limit == nullptr) limit = quantity_of(c.resources.requests, "memory");
    if (limit != nullptr && *limit >= (estimate ? estimate->amount : fixed_floor(cfg, gpus))) continue;
    report_short(ctx, c, limit, estimate ? *estimate : explained_fixed_floor(cfg, gpus));
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
