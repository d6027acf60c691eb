// memory-floor: a GPU job short of host memory is OOMKilled (exit code 137), usually in its DataLoader
// workers, long after it started.
#include <optional>

#include "../rule_context.hpp"
#include "gpuadmit/policy/training_memory.hpp"

namespace gpuadmit::policy {
namespace {

// What a container must hold, and how that was worked out (in full, and short enough for a warning).
struct Floor {
  k8s::Quantity amount;
  std::string how;
  std::string short_how;
};

Floor model_floor(const TrainingModel& model, const MemoryFloor& cfg) {
  const TrainingEstimate e = training_host_memory(model, cfg.overhead.approx(), cfg.safety_percent);
  return {k8s::Quantity::from_units(e.gib, k8s::Quantity::Format::kBinarySI).times(std::int64_t{1} << 30),
          e.working, e.short_working};
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

void report_unreadable(RuleContext& ctx, const Error& error) {
  ctx.report(ctx.rules().memory_floor.action, "metadata.annotations",
             error.message + ".\nFix: correct the annotation or remove it (docs/policy.md, memory-floor).",
             error.message);
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
  const auto model = training_model_of(ctx.pod());
  if (!model) {
    report_unreadable(ctx, model.error());
    return;
  }
  if (*model) estimate = model_floor(**model, cfg);
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
