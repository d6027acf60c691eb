// Parsing of the cluster objects gpuadmit judges against (Node, ResourceQuota, StorageClass, PVC,
// Karpenter's NodePool) and of a resource list into the typed views of objects.hpp, with pod_parser.hpp's
// checks: every type mismatch is an error naming the field path.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::k8s {

Result<Node> parse_node(const nlohmann::json& object);
Result<ResourceQuota> parse_resource_quota(const nlohmann::json& object);
Result<StorageClass> parse_storage_class(const nlohmann::json& object);
Result<PersistentVolumeClaim> parse_persistent_volume_claim(const nlohmann::json& object);
Result<NodePool> parse_node_pool(const nlohmann::json& object);
Result<ResourceList> parse_resource_list(const nlohmann::json& list, const std::string& path);

}  // namespace gpuadmit::k8s
