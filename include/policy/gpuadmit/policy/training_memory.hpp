// What a training job holds in host memory (memory-floor) and what its checkpoints take on disk
// (checkpoint-pvc), from the pod's model annotations (docs/policy.md "memory-floor"); pure arithmetic, one
// function per figure, each able to show its working. `gpuadmit recommend` calls the same functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::policy {

struct TrainingModel {
  std::string parameters_text;  // as annotated: "7B"
  double parameters = 0;
  std::string precision = "fp32";
  double bytes_per_parameter = 4;
  std::string optimizer = "none";
  double batch_bytes = 0;
  std::string batch_text;  // "32 × 588Ki bytes" from batch-size × input-bytes; "" otherwise
};

// Bytes of optimizer state per parameter, kept in FP32: adam and adamw 8 (two moments), sgd 4 (momentum),
// none 0; nothing for a name it does not know.
std::optional<double> optimizer_bytes(std::string_view optimizer);

// The model of a pod annotated gpuadmit.io/model-parameters that is not served (model-mode other than
// inference); nothing for any other pod; an error naming the annotation that cannot be read.
Result<std::optional<TrainingModel>> training_model_of(const k8s::Pod& pod);

struct TrainingEstimate {
  double bytes = 0;           // before the safety margin
  std::int64_t gib = 0;       // × the margin, rounded up to a whole GiB
  std::string working;        // "weights 13Gi (7B × 2 bytes, bf16) + FP32 master copy 26.1Gi + ... × 150%"
  std::string short_working;  // "7B params bf16 + batch + overhead, ×150%"
};
// Weights + the FP32 master copy that mixed precision keeps beside them (precisions under 4 bytes) +
// gradients (as large as the weights) + optimizer state + batch + overhead, × safety_percent / 100.
TrainingEstimate training_host_memory(const TrainingModel& model, double overhead_bytes,
                                      std::int64_t safety_percent);

// What the checkpoints of a model hold, from the annotations of a claim or a pod.
struct CheckpointModel {
  std::string parameters_text;
  double parameters = 0;
  double bytes_per_parameter = 4;  // gpuadmit.io/checkpoint-bytes-per-parameter, else the precision's
  double optimizer_bytes = 0;      // with gpuadmit.io/checkpoint-optimizer: "true", the optimizer's state
  std::int64_t kept = 1;           // gpuadmit.io/checkpoints-kept, else the policy's
};
// Nothing without gpuadmit.io/model-parameters; an error naming the annotation that cannot be read.
Result<std::optional<CheckpointModel>> checkpoint_model_of(const k8s::StringMap& annotations,
                                                           std::int64_t default_kept);

struct CheckpointEstimate {
  double bytes = 0;     // all the checkpoints kept
  std::string working;  // "1B parameters × 4 bytes × 10 checkpoints kept"
};
// parameters × (bytes per parameter + optimizer bytes per parameter, when the checkpoint keeps that state)
// × checkpoints kept (1B at FP32 × 10 kept = 40e9 bytes).
CheckpointEstimate checkpoint_bytes(std::string_view parameters_text, double parameters,
                                    double bytes_per_parameter, double optimizer_bytes_per_parameter,
                                    std::int64_t kept);
CheckpointEstimate checkpoint_bytes(const CheckpointModel& model);

}  // namespace gpuadmit::policy
