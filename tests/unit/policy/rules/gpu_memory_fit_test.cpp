// gpu-memory-fit: an inference model's weights, KV cache and overhead against the GPU memory it asks for.
// The figures are the source articles' (issue #20): 7B at FP16 is about 14 GB, 70B about 140 GB; Llama-7B's
// KV cache at 4096 tokens about 2 GB per request.
#include <catch2/catch.hpp>

#include <cmath>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/policy/inference_memory.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using nlohmann::json;

namespace {

json served_pod(const std::string& annotations, int gpus) {
  return gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: serve
  annotations: {gpuadmit.io/model-mode: inference, )" +
                              annotations + R"(}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.4.0
    resources:
      limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: )" +
                              std::to_string(gpus) + R"(}
)");
}

gpuadmit::policy::InferenceModel model_of(const json& pod) {
  auto parsed = gpuadmit::k8s::parse_pod(pod);
  REQUIRE(parsed.ok());
  auto model = gpuadmit::policy::inference_model_of(*parsed);
  REQUIRE(model.ok());
  REQUIRE(model->has_value());
  return **model;
}

std::string fit_text(const gpuadmit::policy::Decision& d) {
  for (const auto* list : {&d.violations, &d.warnings}) {
    for (const auto& f : *list) {
      if (f.rule == "gpu-memory-fit") return f.message;
    }
  }
  return {};
}

}  // namespace

TEST_CASE("a model's weights are its parameters times the bytes of its precision",
          "[rules][gpu-memory-fit]") {
  const auto [parameters, precision, gigabytes] = GENERATE(table<std::string, std::string, double>({
      {"7B", "fp16", 14},
      {"13B", "fp16", 26},
      {"70B", "fp16", 140},
      {"7B", "int8", 7},
      {"13B", "int8", 13},
      {"70B", "int8", 70},
      {"7B", "int4", 3.5},
      {"13B", "int4", 6.5},
      {"70B", "int4", 35},
  }));
  CAPTURE(parameters, precision);
  const auto model = model_of(served_pod(
      "gpuadmit.io/model-parameters: " + parameters + ", gpuadmit.io/model-precision: " + precision, 1));
  CHECK(gpuadmit::policy::weight_bytes(model) == Approx(gigabytes * 1e9));
}

TEST_CASE("Llama-2-7B's KV cache at 4096 tokens is 2 GiB per request, and grows with requests and context",
          "[rules][gpu-memory-fit]") {
  const auto [annotations, gib] = GENERATE(table<std::string, double>({
      {"gpuadmit.io/model-family: llama-2-7b", 2},
      {"gpuadmit.io/model-family: llama-2-7b, gpuadmit.io/concurrent-requests: \"8\"", 16},
      {"gpuadmit.io/model-family: llama-2-7b, gpuadmit.io/context-length: \"8192\"", 4},
      // Grouped-query attention: 8 KV heads of 64, so a tenth of the cache MHA would hold.
      {"gpuadmit.io/model-family: llama-2-70b", 1.25},
      // Without a shape the cache is not counted (and the working says so).
      {"gpuadmit.io/model-parameters: 7B", 0},
  }));
  CAPTURE(annotations);
  const auto model = model_of(served_pod(annotations, 1));
  CHECK(gpuadmit::policy::kv_cache_bytes(model) == Approx(gib * (1LL << 30)));
}

TEST_CASE("a 70B model on one GPU is warned with the GPUs it needs and the quantized alternatives",
          "[rules][gpu-memory-fit]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto decision =
      gpuadmit::test::run(served_pod("gpuadmit.io/model-family: llama-2-70b", 1), Mode::kValidate, {}, &view);
  const std::string text = fit_text(decision);
  CHECK_THAT(text,
             Catch::Contains("Llama-2-70B fp16 needs about 132.6Gi of GPU memory: 2× NVIDIA-H100-80GB-HBM3"));
  CHECK_THAT(text, Catch::Contains("INT8 about 67.4Gi: 1× NVIDIA-H100-80GB-HBM3"));
  CHECK_THAT(text, Catch::Contains("weights 130.4Gi"));
  CHECK_THAT(text, Catch::Contains("this pod asks for 1× "));
  // Two H100s hold it.
  CHECK(fit_text(gpuadmit::test::run(served_pod("gpuadmit.io/model-family: llama-2-70b", 2), Mode::kValidate,
                                     {}, &view))
            .empty());
}

TEST_CASE("a model that fits one of the GPUs the pod may land on is not warned about",
          "[rules][gpu-memory-fit]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  // 7B fp16: 13Gi + 2Gi cache + 1Gi: more than a T4's 15Gi, within an A100's 40Gi.
  CHECK(fit_text(gpuadmit::test::run(served_pod("gpuadmit.io/model-family: llama-2-7b", 1), Mode::kValidate,
                                     {}, &view))
            .empty());
  // A training pod is memory-floor's, not this rule's.
  json training = served_pod("gpuadmit.io/model-family: llama-2-70b", 1);
  training["metadata"]["annotations"]["gpuadmit.io/model-mode"] = "training";
  CHECK(fit_text(gpuadmit::test::run(training, Mode::kValidate, {}, &view)).empty());
}

TEST_CASE("an unreadable model annotation is named with what it takes", "[rules][gpu-memory-fit]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto [annotations, said] = GENERATE(table<std::string, std::string>({
      {"gpuadmit.io/model-family: gpt-9", "gpuadmit.io/model-family: \"gpt-9\" is not one of llama-2-7b"},
      {"gpuadmit.io/model-parameters: lots",
       "gpuadmit.io/model-parameters: \"lots\" is not a parameter count"},
      {"gpuadmit.io/model-family: llama-2-7b, gpuadmit.io/model-precision: fp12",
       "gpuadmit.io/model-precision: \"fp12\""},
      {"gpuadmit.io/model-family: llama-2-7b, gpuadmit.io/context-length: \"0\"",
       "gpuadmit.io/context-length: \"0\" is not a whole number"},
      {"gpuadmit.io/model-precision: int8",
       "neither gpuadmit.io/model-family nor gpuadmit.io/model-parameters"},
  }));
  CAPTURE(annotations);
  CHECK_THAT(fit_text(gpuadmit::test::run(served_pod(annotations, 1), Mode::kValidate, {}, &view)),
             Catch::Contains(said));
}

TEST_CASE("a measured peak overrides the estimate, for training pods too", "[rules][gpu-memory-fit]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto [mode, peak, said] = GENERATE(table<std::string, std::string, std::string>({
      // 90Gi measured (torch.cuda.max_memory_allocated) is more than the largest GPU here, an H100's 80Gi.
      {"training", "90Gi",
       "this model needs about 90Gi of GPU memory: 2× NVIDIA-H100-80GB-HBM3; this pod asks for 1× "},
      // The family's estimate (132.6Gi) would say 2 GPUs; the measured 60Gi fits one.
      {"inference", "60Gi", ""},
      {"training", "60Gi", ""},
      {"training", "lots", "gpuadmit.io/measured-peak-memory: \"lots\" is not a positive quantity"},
  }));
  CAPTURE(mode, peak);
  json pod = served_pod("gpuadmit.io/model-family: llama-2-70b", 1);
  pod["metadata"]["annotations"]["gpuadmit.io/model-mode"] = mode;
  pod["metadata"]["annotations"]["gpuadmit.io/measured-peak-memory"] = peak;
  const std::string text = fit_text(gpuadmit::test::run(pod, Mode::kValidate, {}, &view));
  if (said.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(said));
  }
}

TEST_CASE("a GPU's memory comes from its product name when the memory label is missing, MIG slices too",
          "[rules][gpu-memory-fit]") {
  const auto [product, mib] = GENERATE(table<std::string, std::int64_t>({
      {"NVIDIA-A100-SXM4-80GB", 81920},
      {"NVIDIA-A100-SXM4-40GB", 40960},
      {"Tesla-T4", 15360},
      {"NVIDIA-H100-80GB-HBM3", 81559},
      // GFD's single MIG strategy names the slice: its memory, not the whole A100's, read as decimal GB
      // (below the slice's real 4864 MiB).
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", 4768},
      {"NVIDIA-H100-80GB-HBM3-MIG-3g.40gb", 38146},
      {"NVIDIA-A100-SXM4-40GB-MIG-1g.5gbx", 0},
      {"AMD-Instinct-MI300X", 0},
  }));
  CAPTURE(product);
  const auto known = gpuadmit::policy::known_gpu_mib(product);
  CHECK(known.value_or(0) == mib);
}

TEST_CASE("a HAMi or Volcano vGPU's memory share, not the whole GPU, is what the model must fit",
          "[rules][gpu-memory-fit][gpu-share]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  // Llama-2-7B at fp16 needs about 16Gi: it fits a whole A100-40GB of the fixture (the case above), not 3000
  // MiB or a tenth of one.
  const auto [resource, value, fits, said] = GENERATE(table<std::string, std::string, bool, std::string>({
      {"nvidia.com/gpumem", "3000", false, "2.9Gi of its 40Gi, nvidia.com/gpumem: 3000 each"},
      {"volcano.sh/vgpu-memory", "3000", false, "volcano.sh/vgpu-memory: 3000 each"},
      {"nvidia.com/gpumem", "20Gi", true, ""},
      {"nvidia.com/gpumem-percentage", "10", false, "4Gi of its 40Gi, nvidia.com/gpumem-percentage: 10 each"},
      {"nvidia.com/gpumem-percentage", "50", true, ""},
  }));
  CAPTURE(resource, value);
  json pod = served_pod("gpuadmit.io/model-family: llama-2-7b", 1);
  pod["spec"]["containers"][0]["resources"]["limits"][resource] = value;
  const std::string text = fit_text(gpuadmit::test::run(pod, Mode::kValidate, {}, &view));
  if (fits) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(said));
    CHECK_THAT(text, Catch::Contains("(a larger " + resource + ")"));
  }
}
