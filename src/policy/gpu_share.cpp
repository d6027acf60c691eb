#include "gpuadmit/policy/gpu_share.hpp"

#include <algorithm>
#include <array>

namespace gpuadmit::policy {
namespace {

constexpr std::array<std::string_view, 9> kShareResources{
    "nvidia.com/gpumem",      "nvidia.com/gpumem-percentage", "nvidia.com/gpucores",
    "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores",        "volcano.sh/gpu-memory",
    "metax-tech.com/vcore",   "metax-tech.com/vmemory",       "aliyun.com/gpu-mem"};
// Those that nodes advertise and kube-scheduler counts: Alibaba's GPU share device plugin puts the GiB of
// GPU memory of each node in its allocatable (AliyunContainerService/gpushare-device-plugin).
constexpr std::array<std::string_view, 1> kNodeCounted{"aliyun.com/gpu-mem"};
// Those naming memory in MiB, and the one naming a percentage of it.
constexpr std::array<std::string_view, 3> kMemoryMiB{"nvidia.com/gpumem", "volcano.sh/vgpu-memory",
                                                     "volcano.sh/gpu-memory"};
constexpr std::string_view kMemoryPercent = "nvidia.com/gpumem-percentage";
constexpr double kMiB = 1024.0 * 1024.0;

// As the user wrote it where that is a whole number ("3000", which the API server keeps as "3k").
std::string text_of(const k8s::Quantity& q) {
  return q.is_whole() ? std::to_string(q.units_ceil()) : q.to_string();
}

const k8s::Quantity* share_quantity(const k8s::Container& c, std::string_view resource) {
  for (const k8s::ResourceList* list : {&c.resources.limits, &c.resources.requests}) {
    if (const auto it = list->find(resource); it != list->end() && it->second > k8s::Quantity{})
      return &it->second;
  }
  return nullptr;
}

}  // namespace

bool is_gpu_share_resource(std::string_view resource) noexcept {
  return std::find(kShareResources.begin(), kShareResources.end(), resource) != kShareResources.end();
}

bool is_node_counted_share(std::string_view resource) noexcept {
  return std::find(kNodeCounted.begin(), kNodeCounted.end(), resource) != kNodeCounted.end();
}

bool asks_for_node_counted_share(const k8s::Pod& pod) {
  return std::any_of(pod.containers.begin(), pod.containers.end(), [](const k8s::Container& c) {
    return std::any_of(kNodeCounted.begin(), kNodeCounted.end(),
                       [&](std::string_view r) { return share_quantity(c, r) != nullptr; });
  });
}

bool asks_for_gpu_share(const k8s::Container& c) {
  return std::any_of(kShareResources.begin(), kShareResources.end(),
                     [&](std::string_view r) { return share_quantity(c, r) != nullptr; });
}

bool has_annotated_gpu_share(const k8s::ObjectMeta& meta) {
  static constexpr std::array<std::string_view, 3> kAnnotations{"gpu-fraction", "gpu-memory",
                                                                "gpu-fraction-num-devices"};
  return std::any_of(kAnnotations.begin(), kAnnotations.end(), [&](std::string_view key) {
    return meta.annotations.find(key) != meta.annotations.end();
  });
}

double GpuMemoryShare::of(double gpu_bytes) const {
  return percent > 0 ? gpu_bytes * std::min(percent, 100.0) / 100.0 : std::min(bytes, gpu_bytes);
}

std::optional<GpuMemoryShare> gpu_memory_share(const k8s::Container& c) {
  for (const std::string_view resource : kMemoryMiB) {
    if (const k8s::Quantity* q = share_quantity(c, resource)) {
      const double value = q->approx();
      if (value >= kMiB) return GpuMemoryShare{std::string(resource), q->to_string(), value, 0};
      return GpuMemoryShare{std::string(resource), text_of(*q), value * kMiB, 0};
    }
  }
  if (const k8s::Quantity* q = share_quantity(c, kMemoryPercent))
    return GpuMemoryShare{std::string(kMemoryPercent), text_of(*q), 0, q->approx()};
  return std::nullopt;
}

}  // namespace gpuadmit::policy
