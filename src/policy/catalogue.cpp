#include "gpuadmit/policy/catalogue.hpp"

#include <array>

namespace gpuadmit::policy {

// Each rule's file defines its run and read functions; they are declared here, next to the only table that
// names them, so adding a rule touches this file, its own file, its test and docs/policy.md.
void rule_gpu_intent(RuleContext&);
void rule_presets(RuleContext&);
void rule_gpu_whole_units(RuleContext&);
void rule_gpu_limit_equals_request(RuleContext&);
void rule_guaranteed_qos(RuleContext&);
void rule_memory_floor(RuleContext&);
void rule_shm_size(RuleContext&);
void rule_gpu_type(RuleContext&);
void rule_gpu_tolerations(RuleContext&);
void rule_cuda_driver(RuleContext&);
void rule_dra_claims(RuleContext&);
void rule_node_fit(RuleContext&);
void rule_gpu_memory_fit(RuleContext&);
void rule_gpu_quota(RuleContext&);
void rule_checkpoint_pvc(RuleContext&);
void rule_stray_gpu_toleration(RuleContext&);

void read_gpu_intent(ParameterReader&, RuleSet&);
void read_presets(ParameterReader&, RuleSet&);
void read_gpu_whole_units(ParameterReader&, RuleSet&);
void read_gpu_limit_equals_request(ParameterReader&, RuleSet&);
void read_guaranteed_qos(ParameterReader&, RuleSet&);
void read_memory_floor(ParameterReader&, RuleSet&);
void read_shm_size(ParameterReader&, RuleSet&);
void read_gpu_type(ParameterReader&, RuleSet&);
void read_gpu_tolerations(ParameterReader&, RuleSet&);
void read_cuda_driver(ParameterReader&, RuleSet&);
void read_dra_claims(ParameterReader&, RuleSet&);
void read_node_fit(ParameterReader&, RuleSet&);
void read_gpu_memory_fit(ParameterReader&, RuleSet&);
void read_gpu_quota(ParameterReader&, RuleSet&);
void read_checkpoint_pvc(ParameterReader&, RuleSet&);
void read_stray_gpu_toleration(ParameterReader&, RuleSet&);

namespace {

template <auto Parameters>
Action action_of(const RuleSet& rules) {
  return (rules.*Parameters).action;
}

constexpr ViewKinds kNodes = view_kind_bit(ViewKind::kNode);
constexpr ViewKinds kQuotas = view_kind_bit(ViewKind::kResourceQuota);
// node-fit reads Karpenter's NodePools too: a pool it cannot see may be the one that launches the node.
constexpr ViewKinds kNodesAndPools = kNodes | view_kind_bit(ViewKind::kNodePool);

// Evaluation order: gpu-intent first (it may add the GPU the others then check); presets next, so what they
// add (resources, tolerations) is judged like the user's own; shm-size after the memory rules settle the
// limits it is sized from; gpu-type before gpu-tolerations, which tolerates the pool it steers to; the
// tolerations and driver affinity before node-fit, which judges the pod with everything gpuadmit added.
constexpr std::array kCatalogue{
    RuleEntry{"gpu-intent", false, "gpu-intent", action_of<&RuleSet::gpu_intent>, read_gpu_intent,
              rule_gpu_intent},
    RuleEntry{"presets", false, "presets", action_of<&RuleSet::presets>, read_presets, rule_presets},
    RuleEntry{"gpu-whole-units", false, "gpu-whole-units", action_of<&RuleSet::gpu_whole_units>,
              read_gpu_whole_units, rule_gpu_whole_units},
    RuleEntry{"gpu-limit-equals-request", false, "gpu-limit-equals-request",
              action_of<&RuleSet::gpu_limit_equals_request>, read_gpu_limit_equals_request,
              rule_gpu_limit_equals_request},
    RuleEntry{"guaranteed-qos", false, "guaranteed-qos", action_of<&RuleSet::guaranteed_qos>,
              read_guaranteed_qos, rule_guaranteed_qos},
    RuleEntry{"memory-floor", false, "memory-floor", action_of<&RuleSet::memory_floor>, read_memory_floor,
              rule_memory_floor},
    RuleEntry{"shm-size", false, "shm-size", action_of<&RuleSet::shm_size>, read_shm_size, rule_shm_size},
    RuleEntry{"gpu-type", true, "gpu-type", action_of<&RuleSet::gpu_type>, read_gpu_type, rule_gpu_type,
              kNodes, kDeviceViewKinds},
    RuleEntry{"gpu-tolerations", false, "gpu-tolerations", action_of<&RuleSet::gpu_tolerations>,
              read_gpu_tolerations, rule_gpu_tolerations},
    RuleEntry{"cuda-driver", true, "cuda-driver", action_of<&RuleSet::cuda_driver>, read_cuda_driver,
              rule_cuda_driver, kNodes, kDeviceViewKinds},
    RuleEntry{"dra-claims", true, "dra-claims", action_of<&RuleSet::dra_claims>, read_dra_claims,
              rule_dra_claims, kNodes | kDeviceViewKinds, 0},
    RuleEntry{"node-fit", true, "node-fit", action_of<&RuleSet::node_fit>, read_node_fit, rule_node_fit,
              kNodesAndPools, kDeviceViewKinds},
    RuleEntry{"gpu-memory-fit", true, "gpu-memory-fit", action_of<&RuleSet::gpu_memory_fit>,
              read_gpu_memory_fit, rule_gpu_memory_fit, kNodes, kDeviceViewKinds},
    RuleEntry{"gpu-quota", true, "gpu-quota", action_of<&RuleSet::gpu_quota>, read_gpu_quota, rule_gpu_quota,
              kQuotas, kDeviceViewKinds},
    RuleEntry{"checkpoint-pvc", false, "checkpoint-pvc", action_of<&RuleSet::checkpoint_pvc>,
              read_checkpoint_pvc, rule_checkpoint_pvc},
    RuleEntry{"stray-gpu-toleration", false, "stray-gpu-toleration",
              action_of<&RuleSet::stray_gpu_toleration>, read_stray_gpu_toleration,
              rule_stray_gpu_toleration},
};

std::string joined(bool cluster_aware_only) {
  std::string out;
  for (const RuleEntry& rule : kCatalogue) {
    if (cluster_aware_only && !rule.cluster_aware) continue;
    out.append(out.empty() ? "" : ", ").append(rule.id);
  }
  return out;
}

}  // namespace

std::span<const RuleEntry> rule_catalogue() noexcept {
  return kCatalogue;
}

const RuleEntry* find_rule(std::string_view id) noexcept {
  for (const RuleEntry& rule : kCatalogue) {
    if (rule.id == id) return &rule;
  }
  return nullptr;
}

std::string cluster_aware_rule_list() {
  return joined(true);
}

std::string rule_id_list() {
  return joined(false);
}

}  // namespace gpuadmit::policy
