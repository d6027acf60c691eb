// QoS class exactly as Kubernetes computes it (pkg/apis/core/v1/helper/qos, ComputePodQOS).
// Only cpu and memory count; init and sidecar containers count; ephemeral containers never reach here.
// When pod-level spec.resources is set, the class is computed from it alone.
#pragma once

#include <string_view>

#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::k8s {

enum class QosClass { kBestEffort, kBurstable, kGuaranteed };

std::string_view to_string(QosClass qos) noexcept;

// The class of the pod as the API server would compute it on admission (status.qosClass is ignored:
// on CREATE it is not set yet, and after a mutation it is stale).
QosClass compute_qos(const Pod& pod);

// The class a single set of requirements yields on its own.
QosClass resource_qos(const ResourceRequirements& resources);

}  // namespace gpuadmit::k8s
