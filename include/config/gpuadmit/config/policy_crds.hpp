// The CustomResourceDefinitions of the policy as Kubernetes objects (#23 item 4): the cluster-scoped
// ClusterGPUPolicy, whose spec is a policy's spec, and the namespaced GPUPolicy, whose spec is a policy's
// rules only (a team's policy may only tighten the cluster's). Their OpenAPI schemas are the policy's JSON
// Schema (policy_schema.hpp) made structural, as the API server requires: no draft-07 keywords it does not
// take, int-or-string quantities, preserved unknown fields where a preset carries Kubernetes objects.
#pragma once

#include <nlohmann/json.hpp>

namespace gpuadmit::config {

// apiVersion v1, kind List, with the two CRDs.
nlohmann::ordered_json policy_crds();

// `schema` (a part of policy_schema()) as a structural OpenAPI v3 schema.
nlohmann::ordered_json structural(const nlohmann::ordered_json& schema);

}  // namespace gpuadmit::config
