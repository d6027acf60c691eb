// shm-size: GPU containers get a memory-backed /dev/shm. Container runtimes give 64 MiB, and PyTorch's
// DataLoader workers pass every batch through shared memory: with the default they die with "bus error" or
// "unable to write to file </torch_...>" a few minutes into training.
#include <algorithm>
#include <limits>

#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kShmPath = "/dev/shm";

bool is_shm_path(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path == kShmPath;
}

const k8s::VolumeMount* shm_mount(const k8s::Container& c) {
  const auto it = std::find_if(c.volume_mounts.begin(), c.volume_mounts.end(),
                               [](const k8s::VolumeMount& m) { return is_shm_path(m.mount_path); });
  return it == c.volume_mounts.end() ? nullptr : &*it;
}

const k8s::Volume* volume_named(const k8s::Pod& pod, std::string_view name) {
  const auto it = std::find_if(pod.volumes.begin(), pod.volumes.end(),
                               [&](const k8s::Volume& v) { return v.name == name; });
  return it == pod.volumes.end() ? nullptr : &*it;
}

// An emptyDir in memory, or the node's own /dev/shm (a tmpfs) by hostPath.
bool memory_backed(const k8s::Volume& v) {
  return (v.empty_dir && v.medium == "Memory") || v.host_path == "/dev/shm" || v.host_path == "/dev/shm/";
}

// App containers and sidecars that hold a GPU.
std::vector<const k8s::Container*> gpu_containers(const RuleContext& ctx) {
  std::vector<const k8s::Container*> out;
  for (const k8s::Container& c : ctx.pod().containers) {
    if (c.kind != k8s::ContainerKind::kInit && ctx.gpu_units(c) > 0) out.push_back(&c);
  }
  return out;
}

// The policy's share of the GPU containers' memory limits.
k8s::Quantity wanted_size(const RuleContext& ctx, const std::vector<const k8s::Container*>& gpu_containers) {
  k8s::Quantity total;
  for (const k8s::Container* c : gpu_containers) {
    if (const auto it = c->resources.limits.find("memory"); it != c->resources.limits.end())
      total += it->second;
  }
  return shm_share(ctx.rules().shm_size, total);
}

// A /dev/shm a GPU container mounts that does not serve it well.
struct BadMount {
  enum class Why { kOnDisk, kBelowMinimum };
  Why why;
  const k8s::Container* container;
  const k8s::Volume* volume;
};

// How the GPU containers stand: those without a /dev/shm mount, what is wrong with the mounts there are,
// and the memory-backed volume one of them mounts at /dev/shm, which the others can share.
struct Mounts {
  std::vector<const k8s::Container*> missing;
  std::vector<BadMount> bad;
  const k8s::Volume* shared = nullptr;
};

Mounts mounts_of(const k8s::Pod& pod, const std::vector<const k8s::Container*>& gpu_containers,
                 const ShmSize& cfg) {
  Mounts out;
  for (const k8s::Container* c : gpu_containers) {
    const k8s::VolumeMount* mount = shm_mount(*c);
    if (mount == nullptr) {
      out.missing.push_back(c);
      continue;
    }
    const k8s::Volume* volume = volume_named(pod, mount->name);
    if (volume == nullptr) continue;  // the API server rejects a mount of an undeclared volume itself
    if (!memory_backed(*volume)) {
      out.bad.push_back({BadMount::Why::kOnDisk, c, volume});
      continue;
    }
    if (out.shared == nullptr) out.shared = volume;
    if (volume->size_limit && *volume->size_limit < cfg.minimum) {
      out.bad.push_back({BadMount::Why::kBelowMinimum, c, volume});
    }
  }
  return out;
}

// A volume name the pod does not use yet.
std::string free_volume_name(const k8s::Pod& pod) {
  for (std::string name : {"dshm", "gpuadmit-dshm"}) {
    if (volume_named(pod, name) == nullptr) return name;
  }
  for (int i = 2;; ++i) {
    std::string name = "gpuadmit-dshm-" + std::to_string(i);
    if (volume_named(pod, name) == nullptr) return name;
  }
}

// Bad mounts are at most warnings: the container has a /dev/shm, only not a good one.
void report_bad(RuleContext& ctx, const BadMount& bad, const k8s::Quantity& size) {
  const ShmSize& cfg = ctx.rules().shm_size;
  const k8s::Container& c = *bad.container;
  const std::string& name = bad.volume->name;
  const Action action = std::min(cfg.action, Action::kWarn);
  switch (bad.why) {
    case BadMount::Why::kOnDisk:
      ctx.report(
          action, field_of(c, ".volumeMounts"),
          describe(c) + " mounts volume \"" + name +
              "\" at /dev/shm, which is not memory-backed: shared memory on disk makes DataLoader workers "
              "slow.\nFix: back it with\n    emptyDir:\n      medium: Memory\n      sizeLimit: " +
              size.to_string(),
          describe(c) + ": /dev/shm volume \"" + name + "\" is not memory-backed");
      break;
    case BadMount::Why::kBelowMinimum: {
      const std::string limit = human(*bad.volume->size_limit);
      ctx.report(
          action, "spec.volumes",
          "the /dev/shm volume \"" + name + "\" of " + describe(c) + " is limited to " + limit +
              ", below the policy's minimum of " + human(cfg.minimum) +
              ". DataLoader workers that outgrow it fail with \"bus error\".\nFix: raise its sizeLimit to " +
              size.to_string() + " or more.",
          describe(c) + ": /dev/shm volume \"" + name + "\" is only " + limit + " (policy minimum " +
              human(cfg.minimum) + ")");
      break;
    }
  }
}

// Mounts a memory-backed /dev/shm in each container that lacks one: the shared volume, or a new one.
void mount_shm(RuleContext& ctx, const Mounts& mounts, const k8s::Quantity& size) {
  std::string name;
  if (mounts.shared != nullptr) {
    name = mounts.shared->name;
  } else {
    name = free_volume_name(ctx.pod());
    // Built member by member: nlohmann's nested initializer lists build each pair as an array first.
    nlohmann::json& volume = ctx.append(spec_part("volumes"));
    volume["name"] = name;
    nlohmann::json& empty_dir = volume["emptyDir"] = nlohmann::json::object();
    empty_dir["medium"] = "Memory";
    empty_dir["sizeLimit"] = size.to_string();
    ctx.fixed("spec.volumes",
              "added a memory-backed volume \"" + name + "\" of " + size.to_string() + " for /dev/shm");
  }
  for (const k8s::Container* c : mounts.missing) {
    nlohmann::json& mount = ctx.append(container_part(*c, "volumeMounts"));
    mount["mountPath"] = kShmPath;
    mount["name"] = name;
    ctx.fixed(field_of(*c, ".volumeMounts"), "mounted \"" + name + "\" at /dev/shm in " + describe(*c));
  }
}

void report_missing(RuleContext& ctx, const std::vector<const k8s::Container*>& missing,
                    const k8s::Quantity& size) {
  std::string who;
  for (const k8s::Container* c : missing) who += (who.empty() ? "" : ", ") + describe(*c);
  ctx.report(
      ctx.rules().shm_size.action, field_of(*missing.front(), ".volumeMounts"),
      who +
          " would run with the container runtime's 64 MiB /dev/shm. PyTorch DataLoader workers pass "
          "batches through shared memory and crash with \"bus error\" when it fills.\nFix:\n    volumes:\n"
          "    - name: dshm\n      emptyDir: {medium: Memory, sizeLimit: " +
          size.to_string() +
          "}\n  and in each GPU container:\n    volumeMounts:\n    - {name: dshm, mountPath: /dev/shm}",
      who + ": /dev/shm is the 64 MiB default; DataLoader workers will crash");
}

}  // namespace

k8s::Quantity shm_share(const ShmSize& cfg, const k8s::Quantity& memory) {
  constexpr std::int64_t kMi = 1LL << 20;
  constexpr std::int64_t kGi = 1LL << 30;
  // Room for the round-up below: a share near int64's limit (memory: 100E) would overflow it.
  std::int64_t bytes = std::min(memory.scaled_ceil_units(cfg.percent_of_memory, 100).units_ceil(),
                                std::numeric_limits<std::int64_t>::max() - kGi);
  const std::int64_t unit = bytes >= kGi ? kGi : kMi;
  bytes = (bytes + unit - 1) / unit * unit;
  k8s::Quantity size = k8s::Quantity::from_units(bytes, k8s::Quantity::Format::kBinarySI);
  if (size < cfg.minimum) size = cfg.minimum;
  if (size > cfg.maximum) size = cfg.maximum;
  return size;
}

void rule_shm_size(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const ShmSize& cfg = ctx.rules().shm_size;
  const std::vector<const k8s::Container*> gpus = gpu_containers(ctx);
  if (gpus.empty()) return;
  const k8s::Quantity size = wanted_size(ctx, gpus);
  const Mounts mounts = mounts_of(ctx.pod(), gpus, cfg);
  for (const BadMount& bad : mounts.bad) report_bad(ctx, bad, size);
  // A partial pod's volumes are its runtime's: NIM's operator always mounts /dev/shm, a Trainer runtime
  // (judged itself) may; a warning that is often false is noise.
  if (mounts.missing.empty() || ctx.partial()) return;
  if (cfg.action == Action::kEnforce && ctx.can_fix_pod()) {
    mount_shm(ctx, mounts, size);
  } else {
    report_missing(ctx, mounts.missing, size);
  }
}

void read_shm_size(ParameterReader& r, RuleSet& rules) {
  ShmSize& p = rules.shm_size;
  r.action("action", p.action);
  r.integer("percentOfMemory", 1, 90, p.percent_of_memory);
  r.quantity("minimum", p.minimum);
  r.quantity("maximum", p.maximum);
  if (p.minimum > p.maximum) r.error("minimum is larger than maximum");
}

}  // namespace gpuadmit::policy
