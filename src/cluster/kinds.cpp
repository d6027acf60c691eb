#include "gpuadmit/cluster/kinds.hpp"

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/cluster_object_parser.hpp"
#include "gpuadmit/k8s/dra_parser.hpp"

namespace gpuadmit::cluster {
namespace {

// 100 slices of NVIDIA's 8 GPUs are 0.4 MiB of JSON; of the 128 devices a slice may hold (MIG partitions),
// about 6 MiB: a page's JSON stays within what a page of 500 nodes costs.
constexpr std::size_t kSlicePageSize = 100;

constexpr std::array<KindInfo, kKindCount> kInfo{{
    {"nodes", "Node", "v1", "/api/v1/nodes"},
    {"resourcequotas", "ResourceQuota", "v1", "/api/v1/resourcequotas"},
    {"storageclasses", "StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"},
    {"persistentvolumeclaims", "PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"},
    {"deviceclasses", "DeviceClass", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/deviceclasses", true},
    {"resourceslices", "ResourceSlice", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceslices", true,
     kSlicePageSize},
    {"resourceclaims", "ResourceClaim", "resource.k8s.io/v1", "/apis/resource.k8s.io/v1/resourceclaims",
     true},
    {"resourceclaimtemplates", "ResourceClaimTemplate", "resource.k8s.io/v1",
     "/apis/resource.k8s.io/v1/resourceclaimtemplates", true},
    {"nodepools", "NodePool", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodepools", true},
}};

template <typename T>
Result<ClusterObject> widen(Result<T> parsed) {
  if (!parsed) return parsed.error();
  return ClusterObject(std::move(*parsed));
}

}  // namespace

bool same_view(const ClusterObject& a, const ClusterObject& b) {
  if (a.index() != b.index()) return false;
  return std::visit([&](const auto& left) { return left == std::get<std::decay_t<decltype(left)>>(b); }, a);
}

const KindInfo& info(Kind kind) noexcept {
  return kInfo[index(kind)];
}

bool unavailable_answer(Kind kind, int status) noexcept {
  return info(kind).optional && (status == 404 || status == 403);
}

Result<ClusterObject> parse_object(Kind kind, const nlohmann::json& object) {
  switch (kind) {
    case Kind::kNode:
      return widen(k8s::parse_node(object));
    case Kind::kResourceQuota:
      return widen(k8s::parse_resource_quota(object));
    case Kind::kStorageClass:
      return widen(k8s::parse_storage_class(object));
    case Kind::kPersistentVolumeClaim:
      return widen(k8s::parse_persistent_volume_claim(object));
    case Kind::kDeviceClass:
      return widen(k8s::parse_device_class(object));
    case Kind::kResourceSlice:
      return widen(k8s::parse_resource_slice(object));
    case Kind::kResourceClaim:
      return widen(k8s::parse_resource_claim(object));
    case Kind::kResourceClaimTemplate:
      return widen(k8s::parse_resource_claim_template(object));
    case Kind::kNodePool:
      return widen(k8s::parse_node_pool(object));
  }
  return make_error("unknown kind");
}

Result<std::string> object_key(const nlohmann::json& object) {
  if (!object.is_object()) return make_error("object: expected an object");
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return make_error("metadata: expected an object");
  const auto name = meta->find("name");
  if (name == meta->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return make_error("metadata.name: expected a non-empty string");
  }
  const auto ns = meta->find("namespace");
  if (ns != meta->end() && ns->is_string() && !ns->get_ref<const std::string&>().empty()) {
    return ns->get<std::string>() + "/" + name->get<std::string>();
  }
  return name->get<std::string>();
}

std::string resource_version(const nlohmann::json& object) {
  if (!object.is_object()) return {};
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  const auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

}  // namespace gpuadmit::cluster
