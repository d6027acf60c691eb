// The pod a controller assembles from a PodSpec-like object rather than a pod template: KServe's predictor
// is a PodSpec inlined beside its own members, and its `model` (or `pytorch`, `triton`, ...) member is one
// more container. The pod is judged like any other, and what the rules find or fix is mapped back to the
// member each part came from.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/workload_path.hpp"

namespace gpuadmit::policy {

struct AssembledPod {
  nlohmann::json pod;
  // For the pod's container i, where it is, relative to the object the site found: "/containers/0",
  // "/model"; and the same as a field: "containers[0]", "model".
  std::vector<std::string> container_pointers;
  std::vector<std::string> container_fields;
};

// The object's own members are the pod's spec; its `containers` and the containers (or lists of them) at the
// source's `containers` members are the pod's containers, in that order. A container without a name is
// named for its member ("model").
AssembledPod assemble_pod(const k8s::JsonValue& spec, const WorkloadPod& source);

// A JSON Pointer into the assembled pod ("/spec/containers/1/resources") as one relative to the site's
// object ("/model/resources"); nullopt for what has no place there (the pod's metadata, the containers list
// as a whole).
std::optional<std::string> site_pointer(const AssembledPod& pod, std::string_view pod_pointer);

// The same for a finding's field: "spec.containers[1].resources.limits" → "model.resources.limits".
std::string site_field(const AssembledPod& pod, std::string_view pod_field);

// The decision on the assembled pod with its fields and patch paths relative to the site's object. The pod's
// own metadata edits (its audit trail) have no place there and are dropped: the workload keeps the trail.
Result<Decision> placed_on_site(const AssembledPod& pod, Decision decision);

}  // namespace gpuadmit::policy
