#include "gpuadmit/admission/offline_check.hpp"

#include "gpuadmit/admission/json_patch.hpp"
#include "gpuadmit/admission/messages.hpp"
#include "gpuadmit/k8s/json_paths.hpp"
#include "gpuadmit/k8s/scope.hpp"
#include "gpuadmit/policy/evaluate.hpp"

namespace gpuadmit::admission {

Result<CheckResult> check_object(const nlohmann::json& object, const policy::RuleSet& rules,
                                 const std::string& default_namespace, const policy::ClusterView* cluster) {
  CheckResult result;
  result.fixed = object;
  if (!object.is_object()) return make_error("expected a Kubernetes object (a mapping), got something else");
  result.kind = object.value("kind", std::string());
  const std::string api_version = object.value("apiVersion", std::string());
  result.namespace_ = k8s::text_at(object, {"metadata", "namespace"});
  if (result.namespace_.empty() && !k8s::is_cluster_scoped(policy::api_group(api_version), result.kind))
    result.namespace_ = default_namespace;
  result.name = k8s::text_at(object, {"metadata", "name"});
  if (result.name.empty()) {
    const std::string generate_name = k8s::text_at(object, {"metadata", "generateName"});
    result.name = generate_name.empty() ? "<unnamed>" : generate_name + "*";
  }
  const bool judged =
      ((result.kind == "Pod" || result.kind == "PersistentVolumeClaim") && api_version == "v1") ||
      rules.workload_of(policy::api_group(api_version), result.kind) != nullptr;
  if (!judged) {
    result.checked = false;
    result.skipped_reason =
        result.kind.empty() ? "no kind" : "gpuadmit does not check " + result.kind + " objects";
    return result;
  }

  // The object is read into a JsonDocument, as a review's object is, and judged by the webhook's code.
  auto document = k8s::OwnedJsonDocument::of(object);
  if (!document) return document.error();
  auto mutated =
      policy::evaluate({document->root(), result.namespace_, policy::Mode::kMutate, cluster}, rules);
  if (!mutated) return mutated.error();
  if (!mutated->evaluated) {
    result.checked = false;
    result.skipped_reason = mutated->skipped_reason;
    return result;
  }
  result.fixes = std::move(mutated->fixes);
  result.patch = std::move(mutated->patch);
  result.fixed = object.patch(result.patch);

  auto fixed_document = k8s::OwnedJsonDocument::of(result.fixed);
  if (!fixed_document) return fixed_document.error();
  auto validated =
      policy::evaluate({fixed_document->root(), result.namespace_, policy::Mode::kValidate, cluster}, rules);
  if (!validated) return validated.error();
  result.skipped_rules = validated->skipped_rules;
  result.allowed = validated->allowed();
  result.violations = std::move(validated->violations);
  result.audits = std::move(validated->audits);
  std::vector<std::string> lines = mutated->notices;
  for (const policy::Finding& f : validated->warnings) {
    lines.push_back(f.summary);
    result.warned_rules.push_back(f.rule);
  }
  result.warnings = warning_lines(lines);
  result.warn_findings = std::move(validated->warnings);
  result.controller = validated->controller;
  return result;
}

}  // namespace gpuadmit::admission
