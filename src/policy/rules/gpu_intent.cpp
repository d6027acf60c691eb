// gpu-intent: the pod says GPU (image, labels, launcher flags) but its resources do not.
#include <algorithm>
#include <charconv>
#include <variant>

#include "../dra_devices.hpp"
#include "../rule_context.hpp"
#include "gpuadmit/policy/gpu_share.hpp"

namespace gpuadmit::policy {
namespace {

const std::string* matching_pattern(const GpuIntent& cfg, std::string_view image) {
  const auto it = std::find_if(cfg.image_patterns.begin(), cfg.image_patterns.end(),
                               [&](const std::string& p) { return glob_match(p, image); });
  return it == cfg.image_patterns.end() ? nullptr : &*it;
}

// torchrun / torch.distributed.launch / accelerate flags that start one process per GPU.
std::optional<std::int64_t> processes_per_node(const k8s::Container& c) {
  std::vector<std::string> words = c.command;
  words.insert(words.end(), c.args.begin(), c.args.end());
  static constexpr std::array<std::string_view, 3> kFlags{"--nproc_per_node", "--nproc-per-node",
                                                          "--num_processes"};
  for (std::size_t i = 0; i < words.size(); ++i) {
    // Shell wrappers (`bash -c "torchrun --nproc_per_node=4 train.py"`) keep the flag inside one word.
    for (std::string_view flag : kFlags) {
      for (std::size_t at = words[i].find(flag); at != std::string::npos; at = words[i].find(flag, at + 1)) {
        std::string_view rest = std::string_view(words[i]).substr(at + flag.size());
        if (!rest.empty() && (rest[0] == '=' || rest[0] == ' ')) {
          rest.remove_prefix(1);
        } else if (rest.empty() && i + 1 < words.size()) {
          rest = words[i + 1];
        } else {
          continue;
        }
        std::int64_t n = 0;
        const auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (ec == std::errc{} && ptr != rest.data() && n > 0) return n;
      }
    }
  }
  return std::nullopt;
}

// A launcher that starts more GPU workers than the container holds fails at rank N with "invalid device
// ordinal" (the seed's 4-GPU script on a 1-GPU request).
void report_extra_ranks(RuleContext& ctx) {
  for (const k8s::Container& c : ctx.pod().containers) {
    const auto procs = processes_per_node(c);
    const std::int64_t gpus = ctx.gpu_units(c);
    if (!procs || gpus <= 0 || *procs <= gpus) continue;
    const std::string n = std::to_string(*procs);
    const std::string held = std::to_string(gpus);
    ctx.report(
        ctx.rules().gpu_intent.action, field_of(c, ".resources.limits"),
        describe(c) + " starts " + n + " processes per node (--nproc_per_node=" + n + ") but holds " + held +
            " GPU" + (gpus > 1 ? "s" : "") +
            ": the extra ranks fail with "
            "\"CUDA error: invalid device ordinal\".\nFix: ask for " +
            n + " GPUs, or start " + held + " process" + (gpus > 1 ? "es" : "") + " per node.",
        describe(c) + " runs " + n + " processes per node on " + held + " GPU(s); ask for " + n + " GPUs");
  }
}

// What says a pod with no GPU wanted one.
struct GpuImage {
  std::string image;
  std::string pattern;  // the policy's GPU image pattern it matches
};
struct GpuLabel {
  std::string key;
  std::string value;
};
struct Intent {
  const k8s::Container* container;  // the one to give the GPU
  std::variant<GpuImage, GpuLabel> sign;
};

// An app container or sidecar running a GPU image; else, for a pod with a GPU label, its first app
// container. Not a DaemonSet's pod: those are the GPU stack (device plugin, GPU operator, DCGM exporter)
// running CUDA images on purpose, and a GPU given to one would take a GPU on every node, or, for the device
// plugin, never schedule, so no node offers a GPU.
std::optional<Intent> intent_of(const k8s::Pod& pod, const GpuIntent& cfg) {
  if (pod.meta.controller_kind == "DaemonSet") return std::nullopt;
  for (const k8s::Container& c : pod.containers) {
    if (c.kind == k8s::ContainerKind::kInit) continue;
    if (const std::string* pattern = matching_pattern(cfg, c.image))
      return Intent{&c, GpuImage{c.image, *pattern}};
  }
  for (const auto& [key, value] : cfg.labels) {
    const auto it = pod.meta.labels.find(key);
    if (it == pod.meta.labels.end() || it->second != value) continue;
    const auto first_app =
        std::find_if(pod.containers.begin(), pod.containers.end(),
                     [](const k8s::Container& c) { return c.kind == k8s::ContainerKind::kRegular; });
    if (first_app == pod.containers.end()) return std::nullopt;
    return Intent{&*first_app, GpuLabel{key, value}};
  }
  return std::nullopt;
}

// "runs image x (matches the GPU image pattern "*cuda*")"; `brief`: "runs a GPU image".
std::string sign_text(const Intent& intent, bool brief) {
  if (const auto* image = std::get_if<GpuImage>(&intent.sign)) {
    return brief
               ? "runs a GPU image"
               : "runs image " + image->image + " (matches the GPU image pattern \"" + image->pattern + "\")";
  }
  const auto& label = std::get<GpuLabel>(intent.sign);
  return "is in a pod labelled " + label.key + "=" + label.value;
}

void add_gpu(RuleContext& ctx, const Intent& intent) {
  const GpuIntent& cfg = ctx.rules().gpu_intent;
  const k8s::Container& c = *intent.container;
  ctx.edit(container_part(c, "resources"))["limits"][cfg.resource] = "1";
  ctx.fixed(field_of(c, ".resources.limits"),
            "added " + cfg.resource + ": 1 to " + describe(c) + ", which " + sign_text(intent, false));
  ctx.notice("gpu-intent: " + describe(c) + " " + sign_text(intent, false) +
             " but asked for no GPU; gpuadmit added " + cfg.resource + ": 1");
}

void report_no_gpu(RuleContext& ctx, const Intent& intent) {
  const GpuIntent& cfg = ctx.rules().gpu_intent;
  const k8s::Container& c = *intent.container;
  ctx.report(
      cfg.action, field_of(c, ".resources.limits"),
      describe(c) + " " + sign_text(intent, false) +
          " but requests no GPU: it will run on CPU, silently and many times slower, "
          "or crash when it calls CUDA.\nFix: ask for the GPUs it needs:\n    resources:\n      limits:\n"
          "        " +
          cfg.resource + ": 1",
      describe(c) + " " + sign_text(intent, true) + " but requests no GPU; add limits." + cfg.resource +
          ": 1");
}

}  // namespace

void rule_gpu_intent(RuleContext& ctx) {
  const GpuIntent& cfg = ctx.rules().gpu_intent;
  if (ctx.is_gpu_pod()) {
    report_extra_ranks(ctx);
    return;
  }
  // HAMi's or Volcano's share of a GPU (nvidia.com/gpumem, volcano.sh/gpu-memory, ...): it has one.
  if (std::any_of(ctx.pod().containers.begin(), ctx.pod().containers.end(), asks_for_gpu_share)) return;
  // KAI Scheduler's fraction of a GPU, by annotation: it has one, and a whole GPU added would break it.
  if (has_annotated_gpu_share(ctx.pod().meta)) return;
  // DRA claims the view cannot tell (a claim created a moment earlier in the same apply): they may hold
  // its GPU, and a GPU added beside it would be a second one.
  if (has_unknown_claims(ctx.pod(), ctx.cluster())) return;
  // A template beside GPU templates in one workload (a Dynamo frontend, a Ray head) runs the stack's image
  // on CPU by design: its GPUs are its siblings'.
  if (ctx.gpu_siblings()) return;
  const std::optional<Intent> intent = intent_of(ctx.pod(), cfg);
  if (!intent) return;
  if (cfg.action == Action::kEnforce && ctx.can_fix_pod()) {
    add_gpu(ctx, *intent);
  } else {
    report_no_gpu(ctx, *intent);
  }
}

void read_gpu_intent(ParameterReader& r, RuleSet& rules) {
  GpuIntent& p = rules.gpu_intent;
  r.action("action", p.action);
  r.strings("imagePatterns", p.image_patterns);
  r.string_map("labels", "label key to value", p.labels);
  r.string("resource", p.resource);
}

}  // namespace gpuadmit::policy
