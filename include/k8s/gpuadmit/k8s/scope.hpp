// Which kinds are cluster-scoped, for naming an object the way kubectl does ("deviceclass/gpu.nvidia.com",
// never "default/gpu.nvidia.com").
#pragma once

#include <string_view>

namespace gpuadmit::k8s {

// Whether objects of `kind` in API group `group` ("" for the core group) have no namespace: Kubernetes' own
// cluster-scoped kinds and those of the GPU stacks whose manifests gpuadmit reads (Karpenter, Kueue, Volcano,
// KServe, NVIDIA's operators, GKE). A kind it does not know counts as namespaced, as most custom kinds are.
[[nodiscard]] bool is_cluster_scoped(std::string_view group, std::string_view kind) noexcept;

}  // namespace gpuadmit::k8s
