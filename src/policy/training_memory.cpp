#include "gpuadmit/policy/training_memory.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "gpuadmit/policy/inference_memory.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Sizes for the working: "13Gi", "26.1Gi", and below a GiB "97.5Mi" (a ResNet's weights are not "0.1Gi").
std::string size_text(double bytes) {
  if (bytes >= kGiB) return gib_text(bytes);
  const auto tenths = static_cast<std::int64_t>(std::llround(bytes / (1024.0 * 1024.0) * 10));
  return std::to_string(tenths / 10) + (tenths % 10 == 0 ? "" : "." + std::to_string(tenths % 10)) + "Mi";
}

// "2", "0.5": bytes per parameter as written in the working.
std::string bytes_text(double bytes) {
  std::array<char, 32> b{};
  (void)std::snprintf(b.data(), b.size(), "%g", bytes);
  return b.data();
}

Error annotation_error(std::string_view key, const std::string& value, std::string_view takes) {
  return Error{"annotation " + std::string(key) + ": \"" + value + "\" is not " + std::string(takes), {}};
}

// A non-negative quantity of at most 1Pi, the batch of any machine; nothing otherwise.
std::optional<k8s::Quantity> bounded_quantity(const std::string& text) {
  auto q = k8s::Quantity::parse(text);
  if (!q || q->approx() < 0 || q->approx() > 1024.0 * 1024.0 * kGiB) return std::nullopt;
  return *q;
}

// The batch the job holds in host memory: gpuadmit.io/batch-memory, or batch-size × input-bytes.
std::optional<Error> read_batch(const k8s::Pod& pod, TrainingModel& model) {
  constexpr std::string_view kTakes = "a quantity such as 4Gi or 602112, at most 1Pi";
  if (const std::string* text = annotation(pod, "gpuadmit.io/batch-memory")) {
    const auto q = bounded_quantity(*text);
    if (!q) return annotation_error("gpuadmit.io/batch-memory", *text, kTakes);
    model.batch_bytes = q->approx();
    return std::nullopt;
  }
  const std::string* size = annotation(pod, "gpuadmit.io/batch-size");
  const std::string* input = annotation(pod, "gpuadmit.io/input-bytes");
  if (size == nullptr && input == nullptr) return std::nullopt;
  if (size == nullptr || input == nullptr) {
    return Error{std::string("annotation ") +
                     (size == nullptr ? "gpuadmit.io/input-bytes is set without gpuadmit.io/batch-size"
                                      : "gpuadmit.io/batch-size is set without gpuadmit.io/input-bytes") +
                     "; the batch is their product (or give gpuadmit.io/batch-memory)",
                 {}};
  }
  std::int64_t samples = 0;
  const auto [end, ec] = std::from_chars(size->data(), size->data() + size->size(), samples);
  if (ec != std::errc() || end != size->data() + size->size() || samples < 1 || samples > 10'000'000) {
    return annotation_error("gpuadmit.io/batch-size", *size, "a whole number from 1 to 10000000");
  }
  const auto per_sample = bounded_quantity(*input);
  if (!per_sample) return annotation_error("gpuadmit.io/input-bytes", *input, kTakes);
  model.batch_bytes = static_cast<double>(samples) * per_sample->approx();
  model.batch_text = *size + " × " + *input + " bytes";
  return std::nullopt;
}

}  // namespace

std::optional<double> optimizer_bytes(std::string_view optimizer) {
  const std::string name = lower(optimizer);
  if (name == "adam" || name == "adamw") return 8.0;
  if (name == "sgd") return 4.0;
  if (name == "none") return 0.0;
  return std::nullopt;
}

Result<std::optional<TrainingModel>> training_model_of(const k8s::Pod& pod) {
  const std::string* parameters = annotation(pod, "gpuadmit.io/model-parameters");
  const std::string* mode = annotation(pod, "gpuadmit.io/model-mode");
  if (parameters == nullptr || (mode != nullptr && *mode == "inference"))
    return std::optional<TrainingModel>();
  TrainingModel model;
  const auto count = parse_parameter_count(*parameters);
  if (!count) {
    return annotation_error("gpuadmit.io/model-parameters", *parameters,
                            "a parameter count such as 7B, 350M or 7e9");
  }
  model.parameters_text = *parameters;
  model.parameters = *count;
  if (const std::string* precision = annotation(pod, "gpuadmit.io/model-precision")) {
    const auto bytes = precision_bytes(*precision);
    if (!bytes) {
      return annotation_error("gpuadmit.io/model-precision", *precision,
                              "one of fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4");
    }
    model.precision = lower(*precision);
    model.bytes_per_parameter = *bytes;
  }
  if (const std::string* optimizer = annotation(pod, "gpuadmit.io/optimizer")) {
    if (!optimizer_bytes(*optimizer)) {
      return annotation_error("gpuadmit.io/optimizer", *optimizer, "one of adam, adamw, sgd, none");
    }
    model.optimizer = lower(*optimizer);
  } else if (const std::string* keeps = annotation(pod, "gpuadmit.io/checkpoint-optimizer");
             keeps != nullptr && *keeps == "true") {
    model.optimizer =
        "adam";  // checkpoints that keep optimizer state say there is one: Adam, as they count it
  }
  if (auto error = read_batch(pod, model)) return *error;
  return std::optional<TrainingModel>(std::move(model));
}

TrainingEstimate training_host_memory(const TrainingModel& model, double overhead_bytes,
                                      std::int64_t safety_percent) {
  const double weights = model.parameters * model.bytes_per_parameter;
  // Mixed precision trains a lower-precision copy of the weights and keeps the FP32 master copy it updates.
  const double master = model.bytes_per_parameter < 4 ? model.parameters * 4 : 0;
  const double optimizer = model.parameters * optimizer_bytes(model.optimizer).value_or(0);
  const double bytes = weights + master + weights + optimizer + model.batch_bytes + overhead_bytes;
  const std::string safety = std::to_string(safety_percent) + "%";
  const double total = bytes * static_cast<double>(safety_percent) / 100.0;
  // Annotations bound the figure (parameters to a quantity's range, batch to 1Pi); clamp so the GiB fit.
  const auto gib = static_cast<std::int64_t>(std::ceil(std::min(total, 1e22) / kGiB));
  std::string working = "weights " + size_text(weights) + " (" + model.parameters_text + " × " +
                        bytes_text(model.bytes_per_parameter) + " bytes, " + model.precision + ")";
  if (master > 0) working += " + FP32 master copy " + size_text(master);
  working += " + gradients " + size_text(weights);
  if (optimizer > 0) working += " + " + model.optimizer + " state " + size_text(optimizer);
  if (model.batch_bytes > 0) {
    working += " + batch " + size_text(model.batch_bytes) +
               (model.batch_text.empty() ? std::string() : " (" + model.batch_text + ")");
  }
  working += " + overhead " + size_text(overhead_bytes) + " = " + size_text(bytes) + ", × " + safety;
  return {bytes, gib, working,
          model.parameters_text + " params " + model.precision +
              (optimizer > 0 ? " " + model.optimizer : std::string()) + " + batch + overhead, ×" + safety};
}

Result<std::optional<CheckpointModel>> checkpoint_model_of(const k8s::StringMap& annotations,
                                                           std::int64_t default_kept) {
  const auto value = [&](std::string_view key) -> const std::string* {
    const auto it = annotations.find(key);
    return it == annotations.end() ? nullptr : &it->second;
  };
  const std::string* parameters = value("gpuadmit.io/model-parameters");
  if (parameters == nullptr) return std::optional<CheckpointModel>();
  CheckpointModel model{*parameters, 0, 4, 0, default_kept};
  const auto count = parse_parameter_count(*parameters);
  if (!count) {
    return annotation_error("gpuadmit.io/model-parameters", *parameters,
                            "a parameter count such as 7B, 350M or 7e9");
  }
  model.parameters = *count;
  if (const std::string* precision = value("gpuadmit.io/model-precision")) {
    const auto bytes = precision_bytes(*precision);
    if (!bytes) {
      return annotation_error("gpuadmit.io/model-precision", *precision,
                              "one of fp64, fp32, tf32, bf16, fp16, fp8, int8, int4, fp4");
    }
    model.bytes_per_parameter = *bytes;
  }
  if (const std::string* b = value("gpuadmit.io/checkpoint-bytes-per-parameter")) {
    double bytes = 0;
    const auto [end, ec] = std::from_chars(b->data(), b->data() + b->size(), bytes);
    if (ec != std::errc() || end != b->data() + b->size() || !(bytes > 0 && bytes <= 64)) {
      return annotation_error("gpuadmit.io/checkpoint-bytes-per-parameter", *b,
                              "a number above 0, at most 64");
    }
    model.bytes_per_parameter = bytes;
  }
  if (const std::string* k = value("gpuadmit.io/checkpoints-kept")) {
    const auto [end, ec] = std::from_chars(k->data(), k->data() + k->size(), model.kept);
    if (ec != std::errc() || end != k->data() + k->size() || model.kept < 1 || model.kept > 1000) {
      return annotation_error("gpuadmit.io/checkpoints-kept", *k, "a whole number from 1 to 1000");
    }
  }
  if (const std::string* keeps = value("gpuadmit.io/checkpoint-optimizer")) {
    if (*keeps != "true" && *keeps != "false") {
      return annotation_error("gpuadmit.io/checkpoint-optimizer", *keeps, "true or false");
    }
    const std::string* optimizer = value("gpuadmit.io/optimizer");
    if (*keeps == "true") {
      const auto state = optimizer_bytes(optimizer != nullptr ? *optimizer : "adam");
      if (!state)
        return annotation_error("gpuadmit.io/optimizer", *optimizer, "one of adam, adamw, sgd, none");
      model.optimizer_bytes = *state;
    }
  }
  return std::optional<CheckpointModel>(std::move(model));
}

CheckpointEstimate checkpoint_bytes(const CheckpointModel& model) {
  return checkpoint_bytes(model.parameters_text, model.parameters, model.bytes_per_parameter,
                          model.optimizer_bytes, model.kept);
}

CheckpointEstimate checkpoint_bytes(std::string_view parameters_text, double parameters,
                                    double bytes_per_parameter, double optimizer_bytes_per_parameter,
                                    std::int64_t kept) {
  const double per_parameter = bytes_per_parameter + optimizer_bytes_per_parameter;
  std::string working =
      std::string(parameters_text) + " parameters × " + bytes_text(per_parameter) + " bytes" +
      (optimizer_bytes_per_parameter > 0 ? " (" + bytes_text(bytes_per_parameter) + " weights + " +
                                               bytes_text(optimizer_bytes_per_parameter) + " optimizer state)"
                                         : std::string()) +
      " × " + std::to_string(kept) + (kept == 1 ? " checkpoint kept" : " checkpoints kept");
  return {parameters * per_parameter * static_cast<double>(kept), std::move(working)};
}

}  // namespace gpuadmit::policy
