// What a model being served holds in GPU memory: its weights, the KV cache of the requests it serves at
// once, and the runtime's own overhead. Read from the pod's model annotations (docs/policy.md
// "gpu-memory-fit"); pure arithmetic, one function per figure, each able to show its working.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/objects.hpp"

namespace gpuadmit::policy {

// A model family's shape: enough to size its KV cache. kv_heads are the heads that keep keys and values
// (fewer than the attention heads under grouped-query attention: Llama 2 70B, Llama 3, Mistral).
struct ModelFamily {
  std::string_view name;   // "llama-2-7b"
  std::string_view label;  // "Llama-2-7B", for messages
  double parameters = 0;
  int layers = 0;
  int kv_heads = 0;
  int head_dim = 0;
};

// A family by name, case-insensitively ("Llama-2-70B"), or nullptr.
const ModelFamily* find_model_family(std::string_view name);
// The known families' names, for an error message.
std::string model_family_names();

struct InferenceModel {
  std::string name;  // the family's label, or the parameter count as annotated ("7B")
  double parameters = 0;
  std::string precision = "fp16";
  double bytes_per_parameter = 2;
  int layers = 0;  // 0: the KV cache is unknown and not counted
  int kv_heads = 0;
  int head_dim = 0;
  std::int64_t context = 4096;
  std::int64_t concurrent = 1;
};

// Bytes per parameter of a precision ("fp16" → 2, "int4" → 0.5), or nothing.
std::optional<double> precision_bytes(std::string_view precision);

// The model of a pod annotated gpuadmit.io/model-mode: inference; nothing for any other pod; an error
// naming the annotation that cannot be read.
Result<std::optional<InferenceModel>> inference_model_of(const k8s::Pod& pod);

// GPU memory a profiling run measured (gpuadmit.io/measured-peak-memory, bytes): nothing when the pod does
// not say; an error when it is not a positive quantity.
Result<std::optional<double>> measured_peak_of(const k8s::Pod& pod);

// Weights: parameters × bytes per parameter (7B at FP16 is 14e9 bytes).
double weight_bytes(const InferenceModel& model);
// KV cache: 2 (keys and values) × layers × KV heads × head dim × context × 2 bytes (FP16), per request,
// × concurrent requests (Llama-2-7B at 4096 tokens: 2 GiB per request).
double kv_cache_bytes(const InferenceModel& model);

struct InferenceEstimate {
  double total = 0;     // bytes
  std::string working;  // "weights 130.4Gi (70B × 2 bytes, fp16) + KV cache 1.2Gi (...) + overhead 1Gi"
};
InferenceEstimate inference_gpu_memory(const InferenceModel& model, double overhead_bytes);

// A common GPU by product, for nodes without GPU feature discovery's memory label and for `gpuadmit
// recommend` without a cluster.
struct KnownGpu {
  std::string_view name;                  // "A100-80GB"
  std::array<std::string_view, 2> words;  // all occur in the lower-cased product label ("a100", "80gb")
  std::int64_t mib = 0;
};
std::span<const KnownGpu> known_gpus();
// MiB of a product from that table ("NVIDIA-A100-SXM4-80GB" → 81920), or nothing.
std::optional<std::int64_t> known_gpu_mib(std::string_view product);
// Bytes of one GPU of `node`: the memory label (MiB), else the product label's from the table.
std::optional<double> node_gpu_memory(const k8s::Node& node, const std::string& product_label,
                                      const std::string& memory_label);

// Bytes as GiB with one decimal where it matters: "130.4Gi", "2Gi".
std::string gib_text(double bytes);

}  // namespace gpuadmit::policy
