// A check of one workload kind's own shape: KubeRay passes rayStartParams to `ray start`, so a group that
// declares GPUs to Ray but asks Kubernetes for none runs GPU tasks on a pod without a GPU.
#pragma once

#include <string_view>

#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/rule_set.hpp"
#include "workload_sites.hpp"

namespace gpuadmit::policy {

// For a template of a ray.io object: a gpu-intent warning (an audit under audit) when its head or worker
// group's rayStartParams declare GPUs ("num-gpus", or "GPU" in "resources") while the template's containers
// request no GPU resource.
void check_ray_start_params(std::string_view api_group, const TemplateSite& site, const RuleSet& rules,
                            Decision& decision);

}  // namespace gpuadmit::policy
