// The pod templates of one workload object, found by its kind's paths (workload_path.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// More templates than this in one object is no workload anyone writes: the review fails rather than
// judging some of them.
inline constexpr std::size_t kMaxTemplatesPerObject = 1024;

struct TemplateSite {
  const k8s::JsonValue* pod_template = nullptr;
  std::string pointer;  // "/spec/workerGroupSpecs/1/template"
  std::string field;    // "spec.workerGroupSpecs[1].template"
  // Names the template in messages: "workerGroupSpecs[gpu-group]", a Kubeflow replica type ("Worker"), or
  // the site's name ("head"); empty when there is nothing to tell templates apart by.
  std::string tag;
  bool in_list = false;  // reached through a list item: the field shows an index, so messages name the item
  std::string key;       // matches the same template in the old object on UPDATE (by item label, not index)
  std::int64_t replicas = 1;
  // The innermost list item the path stepped through, else the template's parent (a Ray worker group, a
  // Deployment's spec): where its replicas are read, and what kind-specific checks look at.
  const k8s::JsonValue* anchor = nullptr;
  const WorkloadPod* source = nullptr;  // the kind's entry that found it (podSpec, containers, partial)
};

struct TemplateSites {
  std::vector<TemplateSite> sites;
  // When there are none, why: "no pod template at spec.template", or a path that met a list where it
  // expected a map ("spec.workerGroupSpecs is a list: write spec.workerGroupSpecs[*]").
  std::string none_because;
};

// Every template of `object` at `kind`'s paths, in path order, each once (two paths reaching one template
// judge it once). An error when there are more than kMaxTemplatesPerObject.
Result<TemplateSites> find_template_sites(const k8s::JsonValue& object, const WorkloadKind& kind);

// The old object's templates by their UPDATE key: an item of a keyed list is matched by its label, so a
// reordered list is not a changed one. A key two templates share is left out (they match by pointer).
std::map<std::string, const k8s::JsonValue*> old_templates(const k8s::JsonValue* old_object,
                                                           const WorkloadKind& kind);

// On UPDATE, whether `site` of `object` is the same as in `old_object` (by `before`, old_templates' map),
// and for an assembled pod its sources elsewhere in the object (a workflow's tolerations) too.
bool unchanged(const TemplateSite& site, const std::map<std::string, const k8s::JsonValue*>& before,
               const k8s::JsonValue* old_object, const k8s::JsonValue& object);

// The value at a JSON Pointer such as a site's ("/spec/workerGroupSpecs/1/template"), or null.
const k8s::JsonValue* value_at(const k8s::JsonValue& root, std::string_view pointer);

// Whether a template's containers ask for GPUs by resource name or it holds DRA claims, read from the
// template as written (a PodSpec-like site by its own containers alone): what tells a workload's CPU parts
// (a Ray head, a Dynamo frontend) from GPU templates that forgot their GPUs.
bool asks_for_gpus(const TemplateSite& site, const RuleSet& rules);

}  // namespace gpuadmit::policy
