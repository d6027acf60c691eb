// Test helpers for rule tests: a cluster view from a fixture list, a policy from YAML, and one manifest
// object run the way the API server would run it (mutate, then validate), as `gpuadmit check` does.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"

namespace gpuadmit::test {

// `object` read into a JsonDocument, the one form the policy judges (as `gpuadmit check` reads a manifest).
inline k8s::OwnedJsonDocument document_of(const nlohmann::json& object) {
  auto document = k8s::OwnedJsonDocument::of(object);
  if (!document) throw std::runtime_error(document.error().message);
  return std::move(*document);
}

// policy::evaluate of `object`, read into a document first; `old_object` for an UPDATE.
inline Result<policy::Decision> evaluate(const nlohmann::json& object, const std::string& ns,
                                         policy::Mode mode, const policy::RuleSet& rules,
                                         const policy::ClusterView* cluster = nullptr,
                                         const nlohmann::json* old_object = nullptr) {
  const k8s::OwnedJsonDocument document = document_of(object);
  std::optional<k8s::OwnedJsonDocument> old;
  if (old_object != nullptr) old = document_of(*old_object);
  policy::Request request{document.root(), ns, mode, cluster};
  if (old) request.old_object = &old->root();
  return policy::evaluate(request, rules);
}

// tests/fixtures/cluster/<name>.yaml as the cluster view.
inline policy::ClusterView view_of(const std::string& name) {
  auto snapshot = policy::snapshot_from_list(fixture("cluster/" + name + ".yaml"));
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return policy::ClusterView{std::make_shared<const policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

// tests/fixtures/cluster/gpu-cluster.yaml as the view of a watch that last synced 420 s ago; `stale`: the
// watch has lost the API server since.
inline policy::ClusterView gpu_cluster_view(bool stale = false) {
  policy::ClusterView view = view_of("gpu-cluster");
  view.stale = stale;
  view.age_seconds = 420;
  return view;
}

// A policy whose spec is `spec_yaml` (indented by two spaces), over the defaults.
inline policy::RuleSet policy_with_spec(const std::string& spec_yaml) {
  auto rules =
      config::load_policy("apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n" + spec_yaml, "<test>");
  if (!rules) throw std::runtime_error(rules.error().message);
  return std::move(*rules);
}

// The default policy with `rules_yaml` (the body of spec.rules, indented by four spaces) over it.
inline policy::RuleSet policy_with(const std::string& rules_yaml) {
  if (rules_yaml.empty()) return config::default_rule_set();
  return policy_with_spec("  rules:\n" + rules_yaml);
}

// deploy/policies/<name>, a policy the project ships.
inline policy::RuleSet policy_file(const std::string& name) {
  auto rules =
      config::load_policy_file(std::string(GPUADMIT_FIXTURES_DIR) + "/../../deploy/policies/" + name);
  if (!rules) throw std::runtime_error(rules.error().message);
  return std::move(*rules);
}

// A pod p in namespace ml; `spec` is the body of its spec, indented by two spaces.
inline nlohmann::json pod_with_spec(const std::string& spec) {
  return yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n" + spec);
}

// A pod p in ml-team whose one container, train (busybox), has the limits cpu 8, memory 64Gi and `gpus`
// nvidia.com/gpu; as YAML, for tests that edit the text, and as the object.
inline std::string gpu_pod_yaml(const std::string& gpus) {
  return R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  containers:
    - name: train
      image: busybox
      resources: {limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: ")" +
         gpus + "\"}}\n";
}

inline nlohmann::json gpu_pod(const std::string& gpus) {
  return yaml(gpu_pod_yaml(gpus));
}

// A pod of namespace ml-team whose one container uses one claim, by template or by name.
inline nlohmann::json dra_pod(const std::string& claim_source, const std::string& extra_spec = "") {
  return yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:24.10-py3
      resources: {claims: [{name: gpu}]}
  resourceClaims: [{name: gpu, )" +
              claim_source + "}]\n" + extra_spec);
}

// gpu_pod(gpus) with `member` of its container (image, resources) set to `value`.
inline nlohmann::json gpu_pod_with(const std::string& gpus, const std::string& member, nlohmann::json value) {
  nlohmann::json object = gpu_pod(gpus);
  object["spec"]["containers"][0][member] = std::move(value);
  return object;
}

inline admission::CheckResult check(const nlohmann::json& object, const policy::RuleSet& rules,
                                    const policy::ClusterView* view) {
  auto r = admission::check_object(object, rules, "ml-team", view);
  if (!r) throw std::runtime_error(r.error().message);
  return std::move(*r);
}

inline admission::CheckResult check(const nlohmann::json& object, const policy::ClusterView& view,
                                    const policy::RuleSet& rules = {}) {
  return check(object, rules, &view);
}

// Without a cluster view, and with "default" for the namespace of an object that names none (as kubectl
// without a current namespace).
inline admission::CheckResult check(const nlohmann::json& object, const policy::RuleSet& rules = {}) {
  auto r = admission::check_object(object, rules, "default");
  if (!r) throw std::runtime_error(r.error().message);
  return std::move(*r);
}

// The decision of one evaluation of `object` in namespace ml-team, not applied.
inline policy::Decision run(const nlohmann::json& object, policy::Mode mode,
                            const policy::RuleSet& rules = {}, const policy::ClusterView* cluster = nullptr) {
  auto decision = evaluate(object, "ml-team", mode, rules, cluster);
  if (!decision) throw std::runtime_error(decision.error().message);
  return std::move(*decision);
}

// The terms of the required node affinity in what `check` fixed, which gpu-type and cuda-driver AND into.
inline const nlohmann::json& required_node_terms(const admission::CheckResult& r) {
  return r.fixed.at("spec")
      .at("affinity")
      .at("nodeAffinity")
      .at("requiredDuringSchedulingIgnoredDuringExecution")
      .at("nodeSelectorTerms");
}

// A pod template whose one container asks for `gpus` GPUs, Guaranteed and tolerating the GPU taint: what a
// workload's template looks like when only its count matters.
inline nlohmann::json gpu_pod_template(int gpus) {
  const nlohmann::json quantities = {{"cpu", "1"}, {"memory", "8Gi"}, {"nvidia.com/gpu", gpus}};
  return {{"spec",
           {{"containers",
             nlohmann::json::array({{{"name", "main"},
                                     {"image", "nvcr.io/nvidia/pytorch:24.01-py3"},
                                     {"resources", {{"requests", quantities}, {"limits", quantities}}}}})},
            {"tolerations",
             nlohmann::json::array(
                 {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})}}}};
}

// The rule ids of `findings`, in their order.
inline std::vector<std::string> rules_of(const std::vector<policy::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) out.push_back(f.rule);
  return out;
}

// The one-line warnings of a check, one a line.
inline std::string warnings_text(const admission::CheckResult& r) {
  std::string out;
  for (const auto& w : r.warnings) out += w + "\n";
  return out;
}

// Every violation, warning and notice as one text, for Contains checks.
inline std::string all_text(const admission::CheckResult& r) {
  std::string out;
  for (const auto& v : r.violations) out += "[" + v.rule + "] " + v.message + "\n";
  for (const auto& w : r.warnings) out += w + "\n";
  return out;
}

// The full messages of what the mutating evaluation denied or warned (CheckResult keeps warnings as their
// one-line summaries).
inline std::string messages(const nlohmann::json& object, const policy::RuleSet& rules,
                            const policy::ClusterView* view) {
  auto decision = evaluate(object, "ml-team", policy::Mode::kMutate, rules, view);
  if (!decision) throw std::runtime_error(decision.error().message);
  std::string out;
  for (const auto& f : decision->violations) out += "[" + f.rule + "] " + f.message + "\n";
  for (const auto& f : decision->warnings) out += "[" + f.rule + "] " + f.message + "\n";
  return out;
}

}  // namespace gpuadmit::test
