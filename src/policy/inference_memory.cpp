#include "gpuadmit/policy/inference_memory.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

// Nominal parameter counts, as the articles and the model cards round them (7B at FP16 is 14 GB); shapes
// from each model's published config.json (num_hidden_layers, num_key_value_heads, hidden_size / heads).
constexpr std::array<ModelFamily, 7> kFamilies{{
    {"llama-2-7b", "Llama-2-7B", 7e9, 32, 32, 128},
    {"llama-2-13b", "Llama-2-13B", 13e9, 40, 40, 128},
    {"llama-2-70b", "Llama-2-70B", 70e9, 80, 8, 128},
    {"llama-3-8b", "Llama-3-8B", 8e9, 32, 8, 128},
    {"llama-3-70b", "Llama-3-70B", 70e9, 80, 8, 128},
    {"mistral-7b", "Mistral-7B", 7.2e9, 32, 8, 128},
    {"mixtral-8x7b", "Mixtral-8x7B", 46.7e9, 32, 8, 128},
}};

// GPU memory by product, for nodes without GPU feature discovery's memory label: the first whose words all
// occur in the lower-cased product name wins (so "a100" + "80gb" before "a100"). MiB as GFD reports them.
constexpr std::array<KnownGpu, 11> kKnownGpus{{
    {"H200", {"h200", ""}, 143771},
    {"H100-80GB", {"h100", ""}, 81559},
    {"A100-80GB", {"a100", "80gb"}, 81920},
    {"A100-40GB", {"a100", ""}, 40960},
    {"L40S", {"l40", ""}, 46068},
    {"A10", {"a10", ""}, 23028},
    {"L4", {"l4", ""}, 23034},
    {"T4", {"t4", ""}, 15360},
    {"V100-32GB", {"v100", "32gb"}, 32768},
    {"V100-16GB", {"v100", ""}, 16384},
    {"A30", {"a30", ""}, 24576},
}};

std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A whole number from 1 to `max`, or nothing.
std::optional<std::int64_t> count_of(std::string_view text, std::int64_t max) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > max) return std::nullopt;
  return value;
}

// Reads the whole-number annotation `key` into `out`; an error when it is there but not such a number.
std::optional<Error> read_count(const k8s::Pod& pod, std::string_view key, std::int64_t max, auto& out) {
  const std::string* text = annotation(pod, key);
  if (text == nullptr) return std::nullopt;
  const auto value = count_of(*text, max);
  if (!value) {
    return Error{"annotation " + std::string(key) + ": \"" + *text + "\" is not a whole number from 1 to " +
                     std::to_string(max),
                 {}};
  }
  out = static_cast<std::remove_reference_t<decltype(out)>>(*value);
  return std::nullopt;
}

}  // namespace

const ModelFamily* find_model_family(std::string_view name) {
  const std::string wanted = lowered(name);
  for (const ModelFamily& f : kFamilies) {
    if (f.name == wanted) return &f;
  }
  return nullptr;
}

std::string model_family_names() {
  std::string out;
  for (const ModelFamily& f : kFamilies) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::span<const KnownGpu> known_gpus() {
  return kKnownGpus;
}

std::optional<std::int64_t> known_gpu_mib(std::string_view product) {
  const std::string name = lowered(product);
  // A MIG slice (GFD's single strategy: "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb") has the slice's memory, not
  // the whole GPU's. The name rounds it (an A100's 1g.5gb holds 4864 MiB): read as decimal GB, which is
  // below every slice's real size, so a model that fits this figure fits the slice.
  if (const auto mig = name.find("-mig-"); mig != std::string::npos) {
    const auto dot = name.find('.', mig);
    std::int64_t gb = 0;
    const char* first = dot == std::string::npos ? nullptr : name.data() + dot + 1;
    const char* last = name.data() + name.size();
    if (first == nullptr) return std::nullopt;
    const auto [end, ec] = std::from_chars(first, last, gb);
    if (ec != std::errc() || std::string_view(end, static_cast<std::size_t>(last - end)) != "gb" || gb <= 0 ||
        gb > 1024) {
      return std::nullopt;
    }
    return gb * 1'000'000'000 / (1LL << 20);
  }
  for (const KnownGpu& g : kKnownGpus) {
    if (std::all_of(g.words.begin(), g.words.end(),
                    [&](std::string_view w) { return w.empty() || name.find(w) != std::string::npos; }))
      return g.mib;
  }
  return std::nullopt;
}

std::optional<double> node_gpu_memory(const k8s::Node& node, const std::string& product_label,
                                      const std::string& memory_label) {
  auto mib = int_label(node, memory_label);
  const auto product = node.labels.find(product_label);
  if (!mib && product != node.labels.end()) mib = known_gpu_mib(product->second);
  if (!mib || *mib <= 0) return std::nullopt;
  return static_cast<double>(*mib) * static_cast<double>(1 << 20);
}

std::optional<double> precision_bytes(std::string_view precision) {
  const std::string p = lowered(precision);
  if (p == "fp64" || p == "float64") return 8.0;
  if (p == "fp32" || p == "float32" || p == "tf32") return 4.0;
  if (p == "fp16" || p == "bf16" || p == "float16" || p == "bfloat16") return 2.0;
  if (p == "int8" || p == "fp8") return 1.0;
  if (p == "int4" || p == "fp4") return 0.5;
  return std::nullopt;
}

Result<std::optional<InferenceModel>> inference_model_of(const k8s::Pod& pod) {
  const std::string* mode = annotation(pod, "gpuadmit.io/model-mode");
  if (mode == nullptr || *mode != "inference") return std::optional<InferenceModel>();
  InferenceModel model;
  if (const std::string* family = annotation(pod, "gpuadmit.io/model-family")) {
    const ModelFamily* f = find_model_family(*family);
    if (f == nullptr) {
      return Error{"annotation gpuadmit.io/model-family: \"" + *family + "\" is not one of " +
                       model_family_names() + "; give gpuadmit.io/model-parameters and the shape instead",
                   {}};
    }
    model = {std::string(f->label), f->parameters, "fp16", 2, f->layers, f->kv_heads, f->head_dim, 4096, 1};
  }
  if (const std::string* parameters = annotation(pod, "gpuadmit.io/model-parameters")) {
    const auto count = parse_parameter_count(*parameters);
    if (!count) {
      return Error{"annotation gpuadmit.io/model-parameters: \"" + *parameters +
                       "\" is not a parameter count such as 7B, 350M or 7e9",
                   {}};
    }
    model.parameters = *count;
    if (model.name.empty()) model.name = *parameters;
  }
  if (model.parameters <= 0) {
    return Error{
        "annotation gpuadmit.io/model-mode is inference, but neither gpuadmit.io/model-family nor "
        "gpuadmit.io/model-parameters says how large the model is",
        {}};
  }
  if (const std::string* precision = annotation(pod, "gpuadmit.io/model-precision")) {
    const auto bytes = precision_bytes(*precision);
    if (!bytes) {
      return Error{"annotation gpuadmit.io/model-precision: \"" + *precision +
                       "\" is not one of fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4",
                   {}};
    }
    model.precision = lowered(*precision);
    model.bytes_per_parameter = *bytes;
  }
  for (const auto& [key, max, field] :
       {std::tuple{"gpuadmit.io/model-layers", std::int64_t{1000}, &model.layers},
        std::tuple{"gpuadmit.io/model-kv-heads", std::int64_t{1000}, &model.kv_heads},
        std::tuple{"gpuadmit.io/model-head-dim", std::int64_t{100000}, &model.head_dim}}) {
    if (auto error = read_count(pod, key, max, *field)) return *error;
  }
  if (auto error = read_count(pod, "gpuadmit.io/context-length", 100'000'000, model.context)) return *error;
  if (auto error = read_count(pod, "gpuadmit.io/concurrent-requests", 1'000'000, model.concurrent))
    return *error;
  if (model.kv_heads == 0 || model.head_dim == 0) model.layers = 0;  // a partial shape counts no cache
  return std::optional<InferenceModel>(std::move(model));
}

Result<std::optional<double>> measured_peak_of(const k8s::Pod& pod) {
  const std::string* peak = annotation(pod, "gpuadmit.io/measured-peak-memory");
  if (peak == nullptr) return std::optional<double>();
  const auto q = k8s::Quantity::parse(*peak);
  if (!q || q->approx() <= 0) {
    return Error{"annotation gpuadmit.io/measured-peak-memory: \"" + *peak +
                     "\" is not a positive quantity such as 70Gi",
                 {}};
  }
  return std::optional<double>(q->approx());
}

double weight_bytes(const InferenceModel& model) {
  return model.parameters * model.bytes_per_parameter;
}

double kv_cache_bytes(const InferenceModel& model) {
  return 2.0 * model.layers * model.kv_heads * model.head_dim * static_cast<double>(model.context) * 2.0 *
         static_cast<double>(model.concurrent);
}

std::string gib_text(double bytes) {
  const auto tenths = static_cast<std::int64_t>(std::llround(bytes / static_cast<double>(1LL << 30) * 10));
  return std::to_string(tenths / 10) + (tenths % 10 == 0 ? "" : "." + std::to_string(tenths % 10)) + "Gi";
}

InferenceEstimate inference_gpu_memory(const InferenceModel& model, double overhead_bytes) {
  const double weights = weight_bytes(model);
  const double kv = kv_cache_bytes(model);
  std::string working =
      "weights " + gib_text(weights) + " (" + model.name + " × " +
      (model.bytes_per_parameter == 0.5 ? std::string("0.5")
                                        : std::to_string(static_cast<int>(model.bytes_per_parameter))) +
      " bytes, " + model.precision + ")";
  if (model.layers > 0) {
    working += " + KV cache " + gib_text(kv) + " (" + std::to_string(model.context) + " tokens × " +
               std::to_string(model.concurrent) + (model.concurrent == 1 ? " request" : " requests") + ")";
  } else {
    working += " + KV cache not counted (no model shape)";
  }
  working += " + overhead " + gib_text(overhead_bytes);
  return {weights + kv + overhead_bytes, working};
}

}  // namespace gpuadmit::policy
