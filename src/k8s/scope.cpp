#include "gpuadmit/k8s/scope.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace gpuadmit::k8s {
namespace {

// group, kind: from each API's reference (kubectl api-resources --namespaced=false on 1.37, and the CRDs of
// the projects named).
constexpr std::array<std::pair<std::string_view, std::string_view>, 38> kClusterScoped{{
    {"", "Namespace"},
    {"", "Node"},
    {"", "PersistentVolume"},
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicy"},
    {"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"},
    {"admissionregistration.k8s.io", "MutatingWebhookConfiguration"},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"},
    {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"},
    {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"},
    {"apiextensions.k8s.io", "CustomResourceDefinition"},
    {"apiregistration.k8s.io", "APIService"},
    {"certificates.k8s.io", "CertificateSigningRequest"},
    {"certificates.k8s.io", "ClusterTrustBundle"},
    {"cert-manager.io", "ClusterIssuer"},
    {"cloud.google.com", "ComputeClass"},
    {"config.koordinator.sh", "ClusterColocationProfile"},
    {"gpuadmit.io", "ClusterGPUPolicy"},
    {"karpenter.k8s.aws", "EC2NodeClass"},
    {"karpenter.sh", "NodeClaim"},
    {"karpenter.sh", "NodePool"},
    {"kueue.x-k8s.io", "ClusterQueue"},
    {"kueue.x-k8s.io", "Cohort"},
    {"kueue.x-k8s.io", "ResourceFlavor"},
    {"kueue.x-k8s.io", "Topology"},
    {"networking.k8s.io", "IngressClass"},
    {"node.k8s.io", "RuntimeClass"},
    {"nvidia.com", "ClusterPolicy"},
    {"nvidia.com", "NVIDIADriver"},
    {"rbac.authorization.k8s.io", "ClusterRole"},
    {"rbac.authorization.k8s.io", "ClusterRoleBinding"},
    {"resource.k8s.io", "DeviceClass"},
    {"resource.k8s.io", "DeviceTaintRule"},
    {"resource.k8s.io", "ResourceSlice"},
    {"scheduling.k8s.io", "PriorityClass"},
    {"scheduling.volcano.sh", "Queue"},
    {"serving.kserve.io", "ClusterServingRuntime"},
    {"storage.k8s.io", "CSIDriver"},
    {"storage.k8s.io", "StorageClass"},
}};

}  // namespace

bool is_cluster_scoped(std::string_view group, std::string_view kind) noexcept {
  return std::find(kClusterScoped.begin(), kClusterScoped.end(), std::pair{group, kind}) !=
         kClusterScoped.end();
}

}  // namespace gpuadmit::k8s
