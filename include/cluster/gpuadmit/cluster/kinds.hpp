// The kinds the cluster view watches, where each lives in the API, and their typed views. Only the fields
// the rules read are kept (k8s/objects.hpp, k8s/dra_objects.hpp), which is what keeps the cache small.
// The four Dynamic Resource Allocation kinds (resource.k8s.io/v1, Kubernetes 1.34 and later) are optional:
// an API server that does not serve one (404) or refuses it to gpuadmit (403) leaves it empty, and the view
// syncs without it (reflector.hpp). So is Karpenter's NodePool (karpenter.sh/v1), served only where
// Karpenter runs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/dra_objects.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::cluster {

// The kinds as the policy layer names them (its staleness per kind reads them); the order is the order of
// ClusterObject's alternatives.
using Kind = policy::ViewKind;

inline constexpr std::size_t kKindCount = 9;
inline constexpr std::array<Kind, kKindCount> kAllKinds{
    Kind::kNode,        Kind::kResourceQuota, Kind::kStorageClass,  Kind::kPersistentVolumeClaim,
    Kind::kDeviceClass, Kind::kResourceSlice, Kind::kResourceClaim, Kind::kResourceClaimTemplate,
    Kind::kNodePool};

struct KindInfo {
  std::string_view resource;     // "nodes": the plural, as in RBAC rules and metric labels
  std::string_view kind;         // "Node"
  std::string_view api_version;  // "v1", "storage.k8s.io/v1"
  std::string_view path;         // "/api/v1/nodes": cluster-wide collection (all namespaces)
  // Optional: not served (404) or forbidden (403) means "go on without it", not "retry until it works".
  bool optional = false;
  // At most this many objects per LIST page (0: no cap but the caller's): a page is held as JSON while it is
  // parsed, and a ResourceSlice may hold 128 devices, 30 times a node's JSON.
  std::size_t max_page_size = 0;
};

[[nodiscard]] const KindInfo& info(Kind kind) noexcept;
[[nodiscard]] constexpr std::size_t index(Kind kind) noexcept {
  return static_cast<std::size_t>(kind);
}

// Whether an HTTP `status` answering a LIST or watch of `kind` means "go on without it": 404 (not served:
// resource.k8s.io/v1 needs Kubernetes 1.34) or 403 (not granted: RBAC from before the kind was watched), for
// an optional kind only.
[[nodiscard]] bool unavailable_answer(Kind kind, int status) noexcept;

using ClusterObject = std::variant<k8s::Node, k8s::ResourceQuota, k8s::StorageClass,
                                   k8s::PersistentVolumeClaim, k8s::DeviceClass, k8s::ResourceSlice,
                                   k8s::ResourceClaim, k8s::ResourceClaimTemplate, k8s::NodePool>;

// The typed view of an object of `kind`; errors name the field.
Result<ClusterObject> parse_object(Kind kind, const nlohmann::json& object);

// "namespace/name" for namespaced objects, "name" otherwise (client-go's MetaNamespaceKeyFunc). An error when
// metadata.name is missing: such an event cannot be applied to the cache.
Result<std::string> object_key(const nlohmann::json& object);

// Whether two typed views are equal, field by field. Most MODIFIED events (node heartbeats, condition
// timestamps, image lists) change nothing the rules read; comparing the views lets the store skip the
// rebuild for them.
[[nodiscard]] bool same_view(const ClusterObject& a, const ClusterObject& b);

// metadata.resourceVersion, or "" when absent.
std::string resource_version(const nlohmann::json& object);

}  // namespace gpuadmit::cluster
