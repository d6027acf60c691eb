#include "gpuadmit/policy/evaluate.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "json_diff.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

struct RuleEntry {
  std::string_view id;
  void (*run)(RuleContext&);
};

// Catalogue order: gpu-intent first (it may add the GPU the others then check); tolerations, GPU type and
// driver affinity before node-fit, which judges the pod with everything gpuadmit added. Must list exactly
// kRuleIds, in the same order.
constexpr std::array<RuleEntry, kRuleIds.size()> kRules{{
    {"gpu-intent", rule_gpu_intent},
    {"gpu-whole-units", rule_gpu_whole_units},
    {"gpu-limit-equals-request", rule_gpu_limit_equals_request},
    {"guaranteed-qos", rule_guaranteed_qos},
    {"memory-floor", rule_memory_floor},
    {"gpu-tolerations", rule_gpu_tolerations},
    {"gpu-type", rule_gpu_type},
    {"cuda-driver", rule_cuda_driver},
    {"node-fit", rule_node_fit},
    {"gpu-quota", rule_gpu_quota},
    {"checkpoint-pvc", rule_checkpoint_pvc},
    {"stray-gpu-toleration", rule_stray_gpu_toleration},
}};

constexpr bool same_order() {
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    if (kRules.at(i).id != kRuleIds.at(i)) return false;
  }
  return true;
}
static_assert(same_order(), "kRules must follow kRuleIds");

// JSON Patch from `object` to `object` with `working`'s subtrees in place (mutate a copy, then diff).
nlohmann::json diff_projection(const nlohmann::json& object, const nlohmann::json& working) {
  nlohmann::json patch = nlohmann::json::array();
  if (const auto spec = working.find("spec"); spec != working.end() && object.contains("spec")) {
    std::string path = "/spec";
    append_diff(object["spec"], *spec, path, patch);
  }
  const auto meta = working.find("metadata");
  if (meta == working.end()) return patch;
  const auto original_meta = object.find("metadata");
  if (original_meta == object.end() || !original_meta->is_object()) {
    if (!meta->empty()) patch.push_back({{"op", "add"}, {"path", "/metadata"}, {"value", *meta}});
    return patch;
  }
  for (const auto& [key, value] : meta->get_ref<const nlohmann::json::object_t&>()) {
    const auto before = original_meta->find(key);
    if (before == original_meta->end()) {
      patch.push_back({{"op", "add"}, {"path", "/metadata/" + key}, {"value", value}});
    } else {
      std::string path = "/metadata/" + key;
      append_diff(*before, value, path, patch);
    }
  }
  return patch;
}

}  // namespace

std::vector<std::string> Decision::rules_fired() const {
  std::set<std::string> ids;
  for (const auto* list : {&violations, &warnings, &audits}) {
    for (const Finding& f : *list) ids.insert(f.rule);
  }
  for (const Fix& f : fixes) ids.insert(f.rule);
  return {ids.begin(), ids.end()};
}

Result<Decision> evaluate(const Request& request, const RuleSet& rules) {
  Decision decision;
  if (rules.is_excluded(request.namespace_)) {
    decision.evaluated = false;
    decision.skipped_reason = "namespace " + request.namespace_ + " is excluded by the policy";
    return decision;
  }
  if (request.object.is_object() && request.object.value("kind", std::string()) == "PersistentVolumeClaim") {
    if (auto parsed = checkpoint_claim_parse_check(request.object); !parsed) return parsed.error();
    if (request.mode == Mode::kValidate && rules.checkpoint_pvc.action != Action::kOff) {
      const ClusterSnapshot* snapshot =
          request.cluster != nullptr ? request.cluster->snapshot.get() : nullptr;
      check_checkpoint_claim(request.object, rules, snapshot, decision);
    }
    return decision;
  }
  auto pod = k8s::parse_pod(request.object);
  if (!pod) return pod.error();

  // Validate mode reads the object in place; Mutate mode edits a projected copy (made when a rule first
  // edits) and diffs it at the end.
  nlohmann::json target;

  const bool have_cluster = request.cluster != nullptr && request.cluster->snapshot != nullptr;
  RuleContext ctx(request.object, target, std::move(*pod), rules, request.mode, decision,
                  have_cluster ? request.cluster : nullptr);
  std::string_view last_writer;
  for (const RuleEntry& rule : kRules) {
    if (rules.action_of(rule.id) == Action::kOff) continue;
    if (is_cluster_aware(rule.id) && !have_cluster) {
      decision.skipped_rules.emplace_back(rule.id);
      continue;
    }
    // Re-read the view only when a later rule needs it: the last fix of the run is never re-parsed.
    if (ctx.dirty()) {
      auto reparsed = k8s::parse_pod(target);
      if (!reparsed) {
        return make_error("internal: rule " + std::string(last_writer) +
                          " produced an invalid pod: " + reparsed.error().message);
      }
      ctx.replace_pod(std::move(*reparsed));
    }
    rule.run(ctx);
    if (ctx.dirty()) last_writer = rule.id;
  }
  if (request.mode == Mode::kMutate && decision.changed() && !target.is_null())
    decision.patch = diff_projection(request.object, target);
  return decision;
}

}  // namespace gpuadmit::policy
