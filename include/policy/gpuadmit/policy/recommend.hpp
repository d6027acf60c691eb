// `gpuadmit recommend`: the requests a model needs, worked out with the same estimates the rules weigh
// (memory-floor, gpu-memory-fit, shm-size, checkpoint-pvc, guaranteed-qos's cpu per GPU), so that nobody
// submits, waits for an OOMKill, bumps the limit and resubmits. Pure: the CLI formats it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// One GPU product the model could run on, and how many of it.
struct GpuOption {
  std::string product;        // the node label's value, or the table's name without a cluster
  double bytes_per_gpu = 0;   // GPU memory
  std::int64_t gpus = 0;      // enough to hold the model
  std::int64_t per_node = 0;  // the most a node of it offers; 0 when not known (no cluster)
};

struct Recommendation {
  std::string model;  // "Llama-2-70B fp16, served", "7B bf16, training"
  std::int64_t gpus = 1;
  std::optional<GpuOption> gpu;  // the product chosen, when GPU memory decided the count
  k8s::Quantity cpu;
  k8s::Quantity memory;
  k8s::Quantity shm;
  std::optional<k8s::Quantity> checkpoint_claim;  // training only
  std::vector<std::string> working;               // one line per figure, each with its formula
  std::vector<GpuOption> options;                 // every product weighed, in the order of their GPU count
};

struct RecommendFor {
  // When positive, the GPU count of a training job, whose GPU memory the annotations do not size unless
  // they carry a measured peak.
  std::int64_t gpus = 0;
  // The GPU product to size for (case-insensitive, part of the name: "a100-80", "H100"). Empty: with a
  // cluster, the product that holds the model in the fewest GPUs on one node; without one, kDefaultGpu.
  std::string product;
};
// Without a cluster the model is sized for the GPU most clusters that serve large models have.
inline constexpr std::string_view kDefaultGpu = "A100-80GB";

// What `pod`'s model annotations ask for (gpuadmit.io/model-*, docs/policy.md) on the GPUs `cluster` has
// (the table of common GPUs without one). An error names the annotation that cannot be read, says that
// none describes a model, or that no GPU is named `target.product`.
Result<Recommendation> recommend(const k8s::Pod& pod, const RuleSet& rules, const ClusterSnapshot* cluster,
                                 const RecommendFor& target);

}  // namespace gpuadmit::policy
