#include "gpuadmit/policy/evaluate.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

struct RuleEntry {
  std::string_view id;
  void (*run)(RuleContext&);
};

// Catalogue order: gpu-intent first (it may add the GPU the others then check), tolerations last (they
// depend on whether the pod ended up a GPU pod). Must list exactly kRuleIds, in the same order.
constexpr std::array<RuleEntry, kRuleIds.size()> kRules{{
    {"gpu-intent", rule_gpu_intent},
    {"gpu-whole-units", rule_gpu_whole_units},
    {"gpu-limit-equals-request", rule_gpu_limit_equals_request},
    {"guaranteed-qos", rule_guaranteed_qos},
    {"memory-floor", rule_memory_floor},
    {"gpu-tolerations", rule_gpu_tolerations},
    {"stray-gpu-toleration", rule_stray_gpu_toleration},
}};

constexpr bool same_order() {
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    if (kRules.at(i).id != kRuleIds.at(i)) return false;
  }
  return true;
}
static_assert(same_order(), "kRules must follow kRuleIds");

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
    if (request.mode == Mode::kMutate) decision.mutated = request.object;
    return decision;
  }
  auto pod = k8s::parse_pod(request.object);
  if (!pod) return pod.error();

  // Validate mode reads the object in place; Mutate mode edits a copy that becomes decision.mutated.
  nlohmann::json scratch;
  if (request.mode == Mode::kMutate) decision.mutated = request.object;
  nlohmann::json& target = request.mode == Mode::kMutate ? decision.mutated : scratch;

  RuleContext ctx(target, std::move(*pod), rules, request.mode, decision);
  for (const RuleEntry& rule : kRules) {
    if (rules.action_of(rule.id) == Action::kOff) continue;
    rule.run(ctx);
    if (ctx.dirty()) {
      auto reparsed = k8s::parse_pod(target);
      if (!reparsed) return make_error("internal: rule " + std::string(rule.id) + " produced an invalid pod: " +
                                       reparsed.error().message);
      ctx.replace_pod(std::move(*reparsed));
    }
  }
  return decision;
}

}  // namespace gpuadmit::policy
