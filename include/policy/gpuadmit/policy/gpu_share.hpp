// Shared GPUs: the resources of HAMi and Volcano that qualify a GPU request, how much of each GPU's memory
// or compute a container gets, rather than counting GPUs. They are not GPUs (gpu-whole-units, node-fit and
// gpu-quota never count them), nor ignored: a container asking for one has a GPU share (gpu-intent does not
// tell it to add a GPU), and the memory it names is the GPU memory gpu-memory-fit weighs the model against.
//   HAMi:    nvidia.com/gpumem (MiB of each GPU), nvidia.com/gpumem-percentage, nvidia.com/gpucores (%)
//   Volcano: volcano.sh/vgpu-memory (MiB of each vGPU), volcano.sh/vgpu-cores (%), and the older GPU share
//            volcano.sh/gpu-memory (MiB of one shared GPU, with no count beside it)
//   MetaX under HAMi: metax-tech.com/vcore (%), metax-tech.com/vmemory (GiB; not read as GPU memory)
//   Alibaba: aliyun.com/gpu-mem (GiB of one shared GPU), which nodes advertise and kube-scheduler counts
// Their GPU counts (nvidia.com/gpu under HAMi, volcano.sh/vgpu-number) are GPUs: spec.gpuResources.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::policy {

// Whether `resource` is one of the qualifiers above.
bool is_gpu_share_resource(std::string_view resource) noexcept;

// Whether nodes advertise `resource` in their allocatable, so that kube-scheduler counts it (the others are
// in no node's: their scheduler has kube-scheduler ignore them).
bool is_node_counted_share(std::string_view resource) noexcept;
// Whether a container of the pod asks for one of those: a pod on a GPU for node-fit and gpu-quota.
bool asks_for_node_counted_share(const k8s::Pod& pod);

// Whether a container asks for any of them (a positive limit or request).
bool asks_for_gpu_share(const k8s::Container& c);
// A pod whose GPU share another scheduler grants by annotation: KAI Scheduler's (Run:ai's) `gpu-fraction`,
// `gpu-memory` (MiB) and `gpu-fraction-num-devices` (KAI-Scheduler docs/gpu-sharing/README.md). Its
// containers ask for no nvidia.com/gpu on purpose: KAI's own webhook rejects a pod that has both.
bool has_annotated_gpu_share(const k8s::ObjectMeta& meta);

// The memory of each GPU a container's share gives it: bytes (a MiB count, or bytes when it is 1Mi or more,
// as in "2048Mi"), or a percentage of the GPU's own memory; nothing when the container takes whole GPUs.
struct GpuMemoryShare {
  std::string resource;  // "nvidia.com/gpumem"
  std::string value;     // as written, "3000"
  double bytes = 0;      // 0 with a percentage
  double percent = 0;    // 0 with bytes
  // Of a GPU with `gpu_bytes`: the share's bytes, never more than the GPU has.
  [[nodiscard]] double of(double gpu_bytes) const;
};
std::optional<GpuMemoryShare> gpu_memory_share(const k8s::Container& c);

}  // namespace gpuadmit::policy
