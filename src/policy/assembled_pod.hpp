// The pod a controller assembles from a PodSpec-like object rather than a pod template: KServe's predictor
// is a PodSpec inlined beside its own members, and its `model` (or `pytorch`, `triton`, ...) member is one
// more container; an Argo template's `container` runs with the template's tolerations, else the
// workflow's; a Tekton task's steps keep their requests in `computeResources` and their pod's tolerations in
// the run's podTemplate. The pod is judged like any other, and what the rules find or fix is mapped back to
// the member each part came from.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "workload_sites.hpp"

namespace gpuadmit::policy {

// Where some of the pod's spec members come from, as a JSON Pointer and a field of the whole object.
struct PodSource {
  std::string pointer;                    // "/spec/templates/1", "/spec/podTemplate"
  std::string field;                      // "spec.templates[1]"
  const k8s::JsonValue* value = nullptr;  // null when the object has no such member (yet)
  // The pointers of the objects a fix must create before writing into this source, outermost first.
  std::vector<std::string> missing;
  bool is_object = true;  // false when the member exists but is not an object (the object is invalid)
};

struct AssembledPod {
  nlohmann::json pod;
  // For the pod's container i, where it is in the object: "/spec/predictor/model"; and the same as a
  // field: "spec.predictor.model".
  std::vector<std::string> container_pointers;
  std::vector<std::string> container_fields;
  std::string resources = "resources";  // the containers' member for requests and limits
  std::string site_pointer;             // the object the site found (its initContainers)
  std::string site_field;
  // The sources of the spec members: fixes go to the first; a member read from a later one is copied
  // into the first before it is edited (Argo and Tekton replace such a member, they do not merge it).
  std::vector<PodSource> sources;
  std::map<std::string, std::size_t> member_source;  // spec member → index of the source it was read from
  std::size_t own_volumes = 0;  // the first source's volumes, which come first in the pod's
  bool partial = false;         // the site is partial
  // Where the pod's label and annotation edits go: the first `metadata` source when it is a member of the
  // object the site found (an Argo template's `metadata`); none when it is the workload's own (a TaskRun's
  // `$.metadata`, which the workload's audit trail edits) or there is none.
  std::optional<PodSource> metadata_target;
  // A value the rules read that the controller fills in at run time ("{{inputs.parameters.gpus}}",
  // "$(params.gpus)"), as the field that holds it; the site is then not judged.
  std::string run_time_field;
  // A source that is not an object (`podTemplate: []`): the object is invalid, as its field.
  std::string invalid_source;
};

// The pod `site` (a podSpec site of `root`) becomes, with its containers, spec members and metadata
// gathered from the site's sources.
AssembledPod assemble_pod(const k8s::JsonValue& root, const TemplateSite& site);

// A JSON Pointer into the assembled pod ("/spec/containers/1/resources") as one into the whole object
// ("/spec/predictor/model/resources"); nullopt for what has no place there (the pod's metadata, the
// containers list as a whole).
std::optional<std::string> site_pointer(const AssembledPod& pod, std::string_view pod_pointer);

// The same for a finding's field: "spec.containers[1].resources.limits" →
// "spec.predictor.model.resources.limits". A spec member read from a later source is named there (the
// workflow's `spec.tolerations`), unless `written`: a fix's field names where it is written (the template).
std::string site_field(const AssembledPod& pod, std::string_view pod_field, bool written = false);

// The decision on the assembled pod with its fields and patch paths in the whole object. The pod's own
// metadata edits (its audit trail) have no place there and are dropped: the workload keeps the trail.
Result<Decision> placed_on_site(const AssembledPod& pod, Decision decision);

}  // namespace gpuadmit::policy
