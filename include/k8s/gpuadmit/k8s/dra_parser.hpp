// Parsing of the DRA objects (resource.k8s.io/v1) into dra_objects.hpp's views, with the other parsers'
// checks: a type mismatch is an error naming the field path.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/dra_objects.hpp"

namespace gpuadmit::k8s {

Result<DeviceClass> parse_device_class(const nlohmann::json& object);
Result<ResourceSlice> parse_resource_slice(const nlohmann::json& object);
Result<ResourceClaim> parse_resource_claim(const nlohmann::json& object);
Result<ResourceClaimTemplate> parse_resource_claim_template(const nlohmann::json& object);

}  // namespace gpuadmit::k8s
