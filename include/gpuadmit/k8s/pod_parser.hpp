// Parsing of Pod (and pod template), Node, ResourceQuota, StorageClass and PVC JSON into the typed views
// of objects.hpp.
// Every type mismatch is an error naming the field path, so a malformed object never reaches a rule.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::k8s {

// `object` is a Pod or a PodTemplateSpec (both have metadata and spec). Both forms read the same fields
// with the same errors: nlohmann::json from the CLI and tests, JsonValue from a parsed AdmissionReview.
Result<Pod> parse_pod(const nlohmann::json& object);
Result<Pod> parse_pod(const JsonValue& object);
Result<Node> parse_node(const nlohmann::json& object);
Result<ResourceQuota> parse_resource_quota(const nlohmann::json& object);
Result<StorageClass> parse_storage_class(const nlohmann::json& object);
Result<PersistentVolumeClaim> parse_persistent_volume_claim(const nlohmann::json& object);
Result<ResourceList> parse_resource_list(const nlohmann::json& list, const std::string& path);

}  // namespace gpuadmit::k8s
