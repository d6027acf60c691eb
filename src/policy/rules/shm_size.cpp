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

bool memory_backed(const k8s::Volume& v) {
  return v.empty_dir && v.medium == "Memory";
}

// The policy's share of the GPU containers' memory limits, rounded up to whole MiB (GiB from 1 GiB),
// within [minimum, maximum]. Memory-backed emptyDir pages count against the pod's memory limit, so the
// share must leave the rest for the process itself.
k8s::Quantity wanted_size(const RuleContext& ctx, const std::vector<const k8s::Container*>& gpu_containers) {
  const ShmSize& cfg = ctx.rules().shm_size;
  k8s::Quantity total;
  for (const k8s::Container* c : gpu_containers) {
    if (const auto it = c->resources.limits.find("memory"); it != c->resources.limits.end())
      total += it->second;
  }
  constexpr std::int64_t kMi = 1LL << 20;
  constexpr std::int64_t kGi = 1LL << 30;
  // Room for the round-up below: a share near int64's limit (memory: 100E) would overflow it.
  std::int64_t bytes = std::min(total.scaled_ceil_units(cfg.percent_of_memory, 100).units_ceil(),
                                std::numeric_limits<std::int64_t>::max() - kGi);
  const std::int64_t unit = bytes >= kGi ? kGi : kMi;
  bytes = (bytes + unit - 1) / unit * unit;
  k8s::Quantity size = k8s::Quantity::from_units(bytes, k8s::Quantity::Format::kBinarySI);
  if (size < cfg.minimum) size = cfg.minimum;
  if (size > cfg.maximum) size = cfg.maximum;
  return size;
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

}  // namespace

void rule_shm_size(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const ShmSize& cfg = ctx.rules().shm_size;
  const k8s::Pod& pod = ctx.pod();
  std::vector<const k8s::Container*> gpu_containers;
  for (const k8s::Container& c : pod.containers) {
    if (c.kind != k8s::ContainerKind::kInit && ctx.gpu_units(c) > 0) gpu_containers.push_back(&c);
  }
  if (gpu_containers.empty()) return;
  const k8s::Quantity size = wanted_size(ctx, gpu_containers);

  // A memory-backed volume some GPU container already mounts at /dev/shm is reused for the others.
  const k8s::Volume* shared = nullptr;
  std::vector<const k8s::Container*> missing;
  for (const k8s::Container* c : gpu_containers) {
    const k8s::VolumeMount* mount = shm_mount(*c);
    if (mount == nullptr) {
      missing.push_back(c);
      continue;
    }
    const k8s::Volume* volume = volume_named(pod, mount->name);
    if (volume == nullptr) continue;  // the API server rejects a mount of an undeclared volume itself
    if (!memory_backed(*volume)) {
      ctx.report(
          std::min(cfg.action, Action::kWarn), field_of(*c, ".volumeMounts"),
          describe(*c) + " mounts volume \"" + volume->name +
              "\" at /dev/shm, which is not memory-backed: shared memory on disk makes DataLoader workers "
              "slow.\nFix: back it with\n    emptyDir:\n      medium: Memory\n      sizeLimit: " +
              size.to_string(),
          describe(*c) + ": /dev/shm volume \"" + volume->name + "\" is not memory-backed");
      continue;
    }
    if (shared == nullptr) shared = volume;
    if (volume->size_limit && *volume->size_limit < cfg.minimum) {
      ctx.report(
          std::min(cfg.action, Action::kWarn), "spec.volumes",
          "the /dev/shm volume \"" + volume->name + "\" of " + describe(*c) + " is limited to " +
              human(*volume->size_limit) + ", below the policy's minimum of " + human(cfg.minimum) +
              ". DataLoader workers that outgrow it fail with \"bus error\".\nFix: raise its sizeLimit to " +
              size.to_string() + " or more.",
          describe(*c) + ": /dev/shm volume \"" + volume->name + "\" is only " + human(*volume->size_limit) +
              " (policy minimum " + human(cfg.minimum) + ")");
    }
  }
  if (missing.empty()) return;

  if (cfg.action == Action::kEnforce && ctx.can_fix()) {
    std::string name;
    if (shared != nullptr) {
      name = shared->name;
    } else {
      name = free_volume_name(pod);
      // Built member by member: nlohmann's nested initializer lists build each pair as an array first.
      nlohmann::json& volume = ctx.append(spec_part("volumes"));
      volume["name"] = name;
      nlohmann::json& empty_dir = volume["emptyDir"] = nlohmann::json::object();
      empty_dir["medium"] = "Memory";
      empty_dir["sizeLimit"] = size.to_string();
      ctx.fixed("spec.volumes",
                "added a memory-backed volume \"" + name + "\" of " + size.to_string() + " for /dev/shm");
    }
    for (const k8s::Container* c : missing) {
      nlohmann::json& mount = ctx.append(container_part(*c, "volumeMounts"));
      mount["mountPath"] = kShmPath;
      mount["name"] = name;
      ctx.fixed(field_of(*c, ".volumeMounts"), "mounted \"" + name + "\" at /dev/shm in " + describe(*c));
    }
    return;
  }
  std::string who;
  for (const k8s::Container* c : missing) who += (who.empty() ? "" : ", ") + describe(*c);
  ctx.report(
      cfg.action, field_of(*missing.front(), ".volumeMounts"),
      who +
          " would run with the container runtime's 64 MiB /dev/shm. PyTorch DataLoader workers pass "
          "batches through shared memory and crash with \"bus error\" when it fills.\nFix:\n    volumes:\n"
          "    - name: dshm\n      emptyDir: {medium: Memory, sizeLimit: " +
          size.to_string() +
          "}\n  and in each GPU container:\n    volumeMounts:\n    - {name: dshm, mountPath: /dev/shm}",
      who + ": /dev/shm is the 64 MiB default; DataLoader workers will crash");
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
