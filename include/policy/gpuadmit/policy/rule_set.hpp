// RuleSet: what a policy means, validated and immutable once built (the config layer builds it from YAML).
// Default member values are the embedded default policy; a test keeps the two identical.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/workload_path.hpp"

namespace gpuadmit::policy {

// enforce: fix when safe, deny when not; warn: allow with a kubectl Warning; audit: allow, log and count.
enum class Action : std::uint8_t { kOff, kAudit, kWarn, kEnforce };

std::string_view to_string(Action action) noexcept;

// Each rule's parameters; the catalogue (catalogue.hpp) names the rules and their order.
struct GpuWholeUnits {
  Action action = Action::kEnforce;
  bool operator==(const GpuWholeUnits&) const = default;
};

struct GpuLimitEqualsRequest {
  Action action = Action::kEnforce;
  bool operator==(const GpuLimitEqualsRequest&) const = default;
};

enum class QosStrategy : std::uint8_t { kRaiseRequests, kLowerLimits, kDeny };
std::string_view to_string(QosStrategy strategy) noexcept;

struct GuaranteedQos {
  Action action = Action::kEnforce;
  QosStrategy strategy = QosStrategy::kRaiseRequests;
  // Used when a GPU container sets neither request nor limit: per GPU it holds.
  k8s::Quantity cpu_per_gpu = k8s::Quantity::from_units(8);
  k8s::Quantity memory_per_gpu = k8s::Quantity::from_units(32LL << 30, k8s::Quantity::Format::kBinarySI);
  // Used for the pod's other containers (init, sidecars, helpers) that set neither.
  k8s::Quantity cpu_other = k8s::Quantity::from_milli(500);
  k8s::Quantity memory_other = k8s::Quantity::from_units(512LL << 20, k8s::Quantity::Format::kBinarySI);
  bool operator==(const GuaranteedQos&) const = default;
};

// gpu-memory-fit: an inference model's weights, KV cache and this overhead against the GPUs asked for.
struct GpuMemoryFit {
  Action action = Action::kWarn;
  k8s::Quantity overhead = k8s::Quantity::from_units(1LL << 30, k8s::Quantity::Format::kBinarySI);
  bool operator==(const GpuMemoryFit&) const = default;
};

struct MemoryFloor {
  Action action = Action::kWarn;
  k8s::Quantity overhead = k8s::Quantity::from_units(2LL << 30, k8s::Quantity::Format::kBinarySI);
  k8s::Quantity per_gpu = k8s::Quantity::from_units(8LL << 30, k8s::Quantity::Format::kBinarySI);
  // The estimate from model annotations is multiplied by this, in percent (150 = ×1.5, the articles'
  // margin for what the estimate leaves out: activations kept on the host, allocator slack).
  std::int64_t safety_percent = 150;
  bool operator==(const MemoryFloor&) const = default;
};

struct GpuIntent {
  Action action = Action::kWarn;
  std::vector<std::string> image_patterns{
      "*cuda*", "nvcr.io/*", "*/pytorch/pytorch:*", "pytorch/pytorch:*", "*tensorflow*-gpu*", "*rocm*"};
  k8s::StringMap labels{{"gpu-training", "true"}};
  std::string resource = "nvidia.com/gpu";  // what enforce adds (one unit)
  bool operator==(const GpuIntent&) const = default;
};

struct GpuTolerations {
  Action action = Action::kEnforce;
  std::vector<k8s::Toleration> tolerations{{"nvidia.com/gpu", "Exists", "", "NoSchedule", std::nullopt}};
  bool operator==(const GpuTolerations&) const = default;
};

struct StrayGpuToleration {
  Action action = Action::kWarn;
  std::vector<std::string> taint_keys{"nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915",
                                      "habana.ai/gaudi"};
  bool operator==(const StrayGpuToleration&) const = default;
};

struct DraClaims {
  Action action = Action::kEnforce;
  // Device classes whose devices are GPUs (a pod asking for them is a GPU pod), besides the classes whose
  // extendedResourceName is a GPU resource. Glob patterns with '*'.
  std::vector<std::string> gpu_device_classes{"*gpu*", "mig.nvidia.com"};
  // A review that spent its selector budget or passed its deadline (review_budget.hpp) before every
  // selector was evaluated: warn, or enforce to fail closed.
  Action over_budget = Action::kWarn;
  bool operator==(const DraClaims&) const = default;
};

struct NodeFit {
  Action action = Action::kEnforce;
  // When no node offers the GPU resource at all (a node pool scaled to zero, waiting for the autoscaler),
  // denying would block every GPU pod of that kind: by default this case only warns.
  Action no_node_offers = Action::kWarn;
  bool operator==(const NodeFit&) const = default;
};

struct GpuType {
  Action action = Action::kEnforce;
  std::string product_label = "nvidia.com/gpu.product";
  std::string memory_label = "nvidia.com/gpu.memory";  // MiB, as GPU feature discovery writes it
  // alias → glob patterns on the product label (case-insensitive). Unknown names match as "*name*".
  std::map<std::string, std::vector<std::string>, std::less<>> aliases{
      {"a100", {"*A100*"}},        {"h100", {"*H100*"}}, {"h200", {"*H200*"}}, {"b200", {"*B200*"}},
      {"l4", {"*-L4", "L4"}},      {"l40s", {"*L40S*"}}, {"t4", {"*T4"}},      {"v100", {"*V100*"}},
      {"a10", {"*-A10", "*A10G"}}, {"a30", {"*A30*"}},   {"a40", {"*A40*"}},   {"mi300x", {"*MI300X*"}}};
  bool operator==(const GpuType&) const = default;
};

k8s::StringMap default_image_cuda();

struct CudaDriver {
  Action action = Action::kWarn;
  std::string major_label = "nvidia.com/cuda.driver.major";
  std::string minor_label = "nvidia.com/cuda.driver.minor";
  // The CUDA version of images whose tags do not say it, by image pattern ('*' globs): NGC framework
  // releases, vLLM's images. A tag's own "cudaX.Y" comes first.
  k8s::StringMap image_cuda = default_image_cuda();
  bool operator==(const CudaDriver&) const = default;
};

struct GpuQuota {
  Action action = Action::kWarn;
  bool operator==(const GpuQuota&) const = default;
};

struct CheckpointPvc {
  Action action = Action::kEnforce;
  std::string marker = "gpuadmit.io/checkpoint";  // label or annotation with value "true"
  k8s::Quantity minimum = k8s::Quantity::from_units(50LL << 30, k8s::Quantity::Format::kBinarySI);
  std::int64_t checkpoints_kept = 3;
  std::int64_t headroom_percent = 120;
  bool operator==(const CheckpointPvc&) const = default;
};

struct ShmSize {
  Action action = Action::kEnforce;
  // The emptyDir's sizeLimit: this share of the memory limits of the GPU containers, within [minimum,
  // maximum].
  std::int64_t percent_of_memory = 25;
  k8s::Quantity minimum = k8s::Quantity::from_units(1LL << 30, k8s::Quantity::Format::kBinarySI);
  k8s::Quantity maximum = k8s::Quantity::from_units(64LL << 30, k8s::Quantity::Format::kBinarySI);
  bool operator==(const ShmSize&) const = default;
};

// A PodDefault-style bundle. Selected when every matchLabels entry is on the pod and, with `gpu_only`, the
// pod requests a GPU. What it adds never overwrites what the user set: a different value is a conflict
// (warning).
struct Preset {
  std::string name;
  k8s::StringMap match_labels;
  bool gpu_only = false;
  bool all_containers = false;  // false: GPU containers only (all app containers when the pod has none)
  nlohmann::json env = nlohmann::json::array();  // [{name, value}] or valueFrom
  k8s::ResourceList requests;                    // per selected container
  k8s::ResourceList limits;
  nlohmann::json tolerations = nlohmann::json::array();  // Kubernetes tolerations
  k8s::StringMap node_selector;
  nlohmann::json volumes = nlohmann::json::array();        // Kubernetes volumes
  nlohmann::json volume_mounts = nlohmann::json::array();  // mounted in every selected container
  k8s::StringMap annotations;
  bool operator==(const Preset&) const = default;
};

struct Presets {
  Action action = Action::kEnforce;
  std::vector<Preset> presets;  // applied in this order
  bool operator==(const Presets&) const = default;
};

// A workload kind whose pod templates are judged as the pods they will become (workload_path.hpp).
struct WorkloadKind {
  std::string api_group;  // "" for the core group
  std::vector<std::string> kinds;
  std::vector<WorkloadPod> pods;
  // The pods of all its templates run at the same time (a JobSet's jobs, a RayCluster's head and workers),
  // so gpu-quota counts their GPUs together; not so an Argo workflow's steps.
  bool concurrent = true;
  bool operator==(const WorkloadKind&) const = default;
};

std::vector<WorkloadKind> default_workload_kinds();

// The API group of an apiVersion: "apps/v1" → "apps", "v1" → "" (the core group).
std::string_view api_group(std::string_view api_version) noexcept;

// What cluster-aware verdicts do while the cluster view is stale (the API server unreachable).
enum class OnStale : std::uint8_t { kWarn, kEnforce, kSkip };
std::string_view to_string(OnStale on_stale) noexcept;

struct RuleSet {
  // Exact names, or a prefix pattern ending in '*' ("nvidia.com/mig-*").
  // Every vendor's GPU device-plugin name (docs/policy.md, "GPU resource names", says where each comes from
  // and which names that look like GPUs are not).
  std::vector<std::string> gpu_resources{
      "nvidia.com/gpu",     "nvidia.com/gpu.shared", "nvidia.com/mig-*",      "amd.com/gpu",
      "gpu.intel.com/i915", "gpu.intel.com/xe",      "intel.com/gpu",         "habana.ai/gaudi",
      "metax-tech.com/gpu", "metax-tech.com/sgpu",   "hygon.com/dcunum",      "iluvatar.ai/vgpu",
      "mthreads.com/vgpu",  "birentech.com/gpu",     "volcano.sh/vgpu-number"};
  std::vector<std::string> excluded_namespaces{"kube-system", "kube-node-lease", "gpu-operator",
                                               "nvidia-gpu-operator"};

  GpuIntent gpu_intent;
  GpuWholeUnits gpu_whole_units;
  GpuLimitEqualsRequest gpu_limit_equals_request;
  GuaranteedQos guaranteed_qos;
  MemoryFloor memory_floor;
  GpuMemoryFit gpu_memory_fit;
  GpuTolerations gpu_tolerations;
  StrayGpuToleration stray_gpu_toleration;
  GpuType gpu_type;
  CudaDriver cuda_driver;
  NodeFit node_fit;
  DraClaims dra_claims;
  GpuQuota gpu_quota;
  CheckpointPvc checkpoint_pvc;
  ShmSize shm_size;
  Presets presets;
  std::vector<WorkloadKind> workloads = default_workload_kinds();
  OnStale on_stale_cluster = OnStale::kWarn;

  [[nodiscard]] bool is_gpu_resource(std::string_view name) const noexcept;
  [[nodiscard]] bool is_excluded(std::string_view ns) const noexcept;
  // The action the policy gives the rule `rule_id` (kOff for an id not in the catalogue).
  [[nodiscard]] Action action_of(std::string_view rule_id) const noexcept;
  // The workload entry for an object's apiVersion group and kind, or nullptr (Pods and claims are not
  // workloads).
  [[nodiscard]] const WorkloadKind* workload_of(std::string_view api_group,
                                                std::string_view kind) const noexcept;

  bool operator==(const RuleSet&) const = default;
};

}  // namespace gpuadmit::policy
