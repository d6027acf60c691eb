// gpuadmit recommend's core: the articles' figures, sized with the rules' own estimates. Served models are
// weighed against the GPUs of the table (or a product named); training jobs get memory-floor's estimate and
// a checkpoint claim.
#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/recommend.hpp"
#include "support/policy_checks.hpp"

namespace {

gpuadmit::k8s::Pod annotated(const std::string& annotations) {
  auto pod = gpuadmit::k8s::parse_pod(
      gpuadmit::test::yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: m, annotations: {" + annotations +
                           "}}\nspec: {containers: [{name: m, image: vllm}]}\n"));
  REQUIRE(pod.ok());
  return *pod;
}

std::string served(const std::string& parameters, const std::string& precision) {
  return "gpuadmit.io/model-mode: inference, gpuadmit.io/model-parameters: " + parameters +
         ", gpuadmit.io/model-precision: " + precision;
}

}  // namespace

TEST_CASE("a served model gets the GPUs its weights, cache and overhead need", "[recommend]") {
  // Without a shape the KV cache is not counted: the articles' weights-only figures, + 1Gi of overhead.
  const auto [annotations, product, gpus] = GENERATE(table<std::string, std::string, std::int64_t>({
      {served("7B", "fp16"), "A100-80GB", 1},
      {served("13B", "fp16"), "A100-80GB", 1},
      {served("70B", "fp16"), "A100-80GB", 2},  // 140 GB: "needs multi-GPU"
      {served("70B", "int8"), "A100-80GB", 1},
      {served("70B", "int4"), "A100-80GB", 1},
      {served("7B", "fp16"), "T4", 1},   // 13Gi + 1Gi within 15Gi
      {served("13B", "fp16"), "T4", 2},  // the article's 13B on a 16 GB T4: does not fit one
      {served("13B", "int8"), "T4", 1},
      {served("70B", "int4"), "T4", 3},
      // Llama-2-7B's 2 GiB of KV cache per request at 4096 tokens tips it over a T4.
      {"gpuadmit.io/model-mode: inference, gpuadmit.io/model-family: llama-2-7b", "T4", 2},
      {"gpuadmit.io/model-mode: inference, gpuadmit.io/model-family: llama-2-70b", "H200", 1},
      // A measured peak overrides the estimate.
      {served("70B", "fp16") + ", gpuadmit.io/measured-peak-memory: 70Gi", "A100-80GB", 1},
  }));
  CAPTURE(annotations, product);
  const auto r = gpuadmit::policy::recommend(annotated(annotations), {}, nullptr, {0, product});
  REQUIRE(r.ok());
  REQUIRE(r->gpu.has_value());
  CHECK(r->gpu->product == product);
  CHECK(r->gpus == gpus);
  CHECK(r->cpu == gpuadmit::k8s::Quantity::from_units(8 * gpus));
}

TEST_CASE("a training job gets memory-floor's estimate, /dev/shm from it and a checkpoint claim",
          "[recommend]") {
  const auto [annotations, memory, shm,
              claim] = GENERATE(table<std::string, std::string, std::string, std::string>({
      // ResNet-50 at batch 32: about 2.2 GiB, × 1.5 → 4Gi; its checkpoints are under the policy's 50Gi.
      {"gpuadmit.io/model-parameters: 25.6M, gpuadmit.io/batch-size: '32', gpuadmit.io/input-bytes: '602112'",
       "4Gi", "1Gi", "50Gi"},
      // 7B bf16 with Adam: 166Gi; 7B × 2 bytes × 3 kept × 120% = 47Gi, under the minimum.
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: bf16, gpuadmit.io/optimizer: adam, "
       "gpuadmit.io/batch-memory: 4Gi",
       "166Gi", "42Gi", "50Gi"},
      // 13B bf16 keeping 10 checkpoints with their optimizer state (Adam, when none is named, for host
      // memory too): 13B × 16 bytes + 2Gi = 195.7 GiB, × 1.5 → 294Gi; 13B × 10 bytes × 10 × 120% = 1453Gi.
      {"gpuadmit.io/model-parameters: 13B, gpuadmit.io/model-precision: bf16, gpuadmit.io/checkpoints-kept: "
       "'10', gpuadmit.io/checkpoint-optimizer: 'true'",
       "294Gi", "64Gi", "1453Gi"},
  }));
  CAPTURE(annotations);
  const auto r = gpuadmit::policy::recommend(annotated(annotations), {}, nullptr, {});
  REQUIRE(r.ok());
  CHECK(r->gpus == 1);
  CHECK(r->memory.to_string() == memory);
  CHECK(r->shm.to_string() == shm);
  REQUIRE(r->checkpoint_claim.has_value());
  CHECK(r->checkpoint_claim->to_string() == claim);
}

TEST_CASE("with a cluster the model is sized for the GPUs its nodes have", "[recommend]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto r = gpuadmit::policy::recommend(
      annotated("gpuadmit.io/model-mode: inference, gpuadmit.io/model-family: llama-2-70b"), {},
      view.snapshot.get(), {});
  REQUIRE(r.ok());
  REQUIRE(r->gpu.has_value());
  CHECK(r->gpu->product == "NVIDIA-H100-80GB-HBM3");
  CHECK(r->gpus == 2);
  // The T4 nodes offer one GPU each: 9 of them are "more than one node has".
  CHECK_THAT(r->working.at(1), Catch::Contains("9× Tesla-T4 (15Gi each, more than one node has: 1)"));
}

TEST_CASE("recommend says what it cannot size", "[recommend]") {
  const auto [annotations, product, said] = GENERATE(table<std::string, std::string, std::string>({
      {"gpuadmit.io/model-precision: bf16", "", "no model to size"},
      {"gpuadmit.io/model-parameters: lots", "", "gpuadmit.io/model-parameters: \"lots\""},
      {served("7B", "fp16"), "mi300x",
       "no GPU product here is named like \"mi300x\"; the products: T4, V100-16GB"},
      {served("7B", "fp16") + ", gpuadmit.io/measured-peak-memory: -1Gi", "",
       "gpuadmit.io/measured-peak-memory: \"-1Gi\" is not a positive quantity"},
  }));
  CAPTURE(annotations, product);
  const auto r = gpuadmit::policy::recommend(annotated(annotations), {}, nullptr, {0, product});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message, Catch::Contains(said));
}
