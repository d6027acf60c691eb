#include "ray_start_params.hpp"

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/policy/text.hpp"

namespace gpuadmit::policy {
namespace {

// The GPUs rayStartParams declare: "num-gpus": "2", or resources: '"{\"GPU\": 2}"'; empty when none.
std::string declared_gpus(const k8s::JsonValue& group) {
  const k8s::JsonValue* params = group.find("rayStartParams");
  if (params == nullptr || !params->is_object()) return {};
  const std::string_view num = k8s::string_member(*params, "num-gpus");
  // A number above zero ("1", "0.5"; not "0" nor "0.0").
  if (num.find_first_not_of("0123456789.") == std::string_view::npos &&
      num.find_first_of("123456789") != std::string_view::npos) {
    return "num-gpus: \"" + std::string(num) + "\"";
  }
  const std::string_view resources = k8s::string_member(*params, "resources");
  // A JSON map inside a string, its quotes often escaped once more: '"{\"GPU\": 2}"'.
  if (resources.find("\"GPU") != std::string_view::npos || resources.find("'GPU") != std::string_view::npos) {
    return "resources: " + std::string(resources);
  }
  return {};
}

}  // namespace

void check_ray_start_params(std::string_view api_group, const TemplateSite& site, const RuleSet& rules,
                            Decision& decision) {
  const Action action = rules.gpu_intent.action;
  if (api_group != "ray.io" || action == Action::kOff) return;
  if (site.anchor == nullptr || !site.anchor->is_object()) return;
  const std::string declared = declared_gpus(*site.anchor);
  if (declared.empty() || asks_for_gpus(site, rules)) return;
  const std::string who = site.tag.empty() ? "this group" : site.tag;
  // Kubernetes gives the pod no GPU, while Ray schedules GPU tasks on it: they fail at CUDA init or wait.
  // Advice either way: gpuadmit cannot tell whether the GPUs or the declaration are the mistake.
  Finding f{
      "gpu-intent", action == Action::kEnforce ? Action::kWarn : action, site.field + ".spec.containers",
      who + ": rayStartParams declare GPUs to Ray (" + declared +
          ") but no container asks Kubernetes for one, so the pod lands without a GPU and Ray's GPU "
          "tasks fail or wait.\nFix: add the GPUs to the Ray container:\n    resources:\n      limits:\n"
          "        nvidia.com/gpu: 1\nor remove them from rayStartParams.",
      one_line(who + ": gpu-intent: Ray is told " + declared + " but the pod requests no GPU")};
  (f.action == Action::kAudit ? decision.audits : decision.warnings).push_back(std::move(f));
}

}  // namespace gpuadmit::policy
