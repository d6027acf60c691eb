// The training estimates of issue #20, with the source articles' worked examples as rows: host memory is
// weights + the FP32 master copy of mixed precision + gradients + optimizer state + batch + overhead, × the
// policy's margin (1.5, as the article), rounded up to a whole GiB; a checkpoint is the parameters × their
// bytes (and the optimizer state it keeps) × the checkpoints kept.
#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/training_memory.hpp"
#include "support/policy_checks.hpp"

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

gpuadmit::k8s::Pod annotated_pod(const std::string& annotations) {
  auto pod = gpuadmit::k8s::parse_pod(
      gpuadmit::test::yaml("apiVersion: v1\nkind: Pod\nmetadata: {name: train, annotations: {" + annotations +
                           "}}\nspec: {containers: [{name: train, image: pytorch}]}\n"));
  REQUIRE(pod.ok());
  return *pod;
}

}  // namespace

TEST_CASE("training host memory is weights, master copy, gradients, optimizer, batch and overhead, × 1.5",
          "[training-memory]") {
  // ResNet-50 has 25.6M parameters; a 224×224 RGB image is 3 × 224 × 224 float32 = 602112 bytes.
  const auto [annotations, low_gib, high_gib,
              gib] = GENERATE(table<std::string, double, double, std::int64_t>({
      // The article's ResNet-50 at batch 32: about 2.3 GiB with 2 GiB of overhead, × 1.5 → 4Gi.
      {"gpuadmit.io/model-parameters: 25.6M, gpuadmit.io/batch-size: '32', gpuadmit.io/input-bytes: '602112'",
       2.1, 2.4, 4},
      // Mixed precision: FP16 weights and gradients beside the FP32 master copy; still "closer to 4Gi".
      {"gpuadmit.io/model-parameters: 25.6M, gpuadmit.io/model-precision: fp16, gpuadmit.io/batch-size: "
       "'32', "
       "gpuadmit.io/input-bytes: '602112'",
       2.1, 2.4, 4},
      // The ViT-B/16 trainer (86M) with Adam at batch 64: 5Gi, far inside a 32 GB T4 node.
      {"gpuadmit.io/model-parameters: 86M, gpuadmit.io/optimizer: adam, gpuadmit.io/batch-size: '64', "
       "gpuadmit.io/input-bytes: 588Ki",
       3.2, 3.4, 5},
      // 7B in bf16 with a 4Gi batch: 14 GB weights, 28 GB master copy, 14 GB gradients.
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: bf16, gpuadmit.io/batch-memory: 4Gi",
       58.1, 58.2, 88},
      // The same with Adam's two FP32 moments: 56 GB more.
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: bf16, gpuadmit.io/batch-memory: 4Gi, "
       "gpuadmit.io/optimizer: adam",
       110.3, 110.4, 166},
      // SGD keeps one momentum buffer; no batch annotation counts no batch.
      {"gpuadmit.io/model-parameters: 1B, gpuadmit.io/optimizer: sgd", 13.1, 13.2, 20},
  }));
  CAPTURE(annotations);
  auto model = gpuadmit::policy::training_model_of(annotated_pod(annotations));
  REQUIRE(model.ok());
  REQUIRE(model->has_value());
  const auto estimate = gpuadmit::policy::training_host_memory(**model, 2 * kGiB, 150);
  CHECK(estimate.bytes / kGiB >= low_gib);
  CHECK(estimate.bytes / kGiB <= high_gib);
  CHECK(estimate.gib == gib);
}

TEST_CASE("the training working names every term it adds", "[training-memory]") {
  auto model = gpuadmit::policy::training_model_of(annotated_pod(
      "gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: bf16, gpuadmit.io/optimizer: adamw, "
      "gpuadmit.io/batch-memory: 4Gi"));
  REQUIRE(model.ok());
  const auto estimate = gpuadmit::policy::training_host_memory(**model, 2 * kGiB, 150);
  CHECK(estimate.working ==
        "weights 13Gi (7B × 2 bytes, bf16) + FP32 master copy 26.1Gi + gradients 13Gi + adamw state 52.2Gi + "
        "batch 4Gi + overhead 2Gi = 110.3Gi, × 150%");
}

TEST_CASE("a served model or a pod without a parameter count has no training estimate", "[training-memory]") {
  const auto annotations = GENERATE(as<std::string>{},
                                    "gpuadmit.io/model-mode: inference, "
                                    "gpuadmit.io/model-parameters: 7B",
                                    "gpuadmit.io/model-precision: bf16", "");
  CAPTURE(annotations);
  auto model = gpuadmit::policy::training_model_of(annotated_pod(annotations));
  REQUIRE(model.ok());
  CHECK_FALSE(model->has_value());
}

TEST_CASE("an unreadable training annotation is named with what it takes", "[training-memory]") {
  const auto [annotations, message] = GENERATE(table<std::string, std::string>({
      {"gpuadmit.io/model-parameters: lots",
       "annotation gpuadmit.io/model-parameters: \"lots\" is not a parameter count such as 7B"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/optimizer: rmsprop",
       "annotation gpuadmit.io/optimizer: \"rmsprop\" is not one of adam, adamw, sgd, none"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/model-precision: fp12",
       "annotation gpuadmit.io/model-precision: \"fp12\" is not one of fp64, fp32"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/batch-size: '32'",
       "gpuadmit.io/batch-size is set without gpuadmit.io/input-bytes"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/batch-size: '0', gpuadmit.io/input-bytes: 1Ki",
       "annotation gpuadmit.io/batch-size: \"0\" is not a whole number from 1 to 10000000"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/batch-memory: -4Gi",
       "annotation gpuadmit.io/batch-memory: \"-4Gi\" is not a quantity"},
      {"gpuadmit.io/model-parameters: 7B, gpuadmit.io/batch-memory: 2Ei",
       "annotation gpuadmit.io/batch-memory: \"2Ei\" is not a quantity such as 4Gi or 602112, at most 1Pi"},
  }));
  CAPTURE(annotations);
  auto model = gpuadmit::policy::training_model_of(annotated_pod(annotations));
  REQUIRE_FALSE(model.ok());
  CHECK_THAT(model.error().message, Catch::Contains(message));
}

TEST_CASE("checkpoints take the parameters times their bytes, times the checkpoints kept",
          "[training-memory]") {
  const auto [bytes, optimizer, kept, gigabytes, working] =
      GENERATE(table<double, double, std::int64_t, double, std::string>({
          // The article: 1B parameters at FP32 ≈ 4 GB a checkpoint, × 10 epochs kept ≈ 40 GB.
          {4, 0, 10, 40, "1B parameters × 4 bytes × 10 checkpoints kept"},
          // Keeping Adam's moments to resume triples it.
          {4, 8, 10, 120, "1B parameters × 12 bytes (4 weights + 8 optimizer state) × 10 checkpoints kept"},
          {2, 0, 1, 2, "1B parameters × 2 bytes × 1 checkpoint kept"},
      }));
  const auto e = gpuadmit::policy::checkpoint_bytes("1B", 1e9, bytes, optimizer, kept);
  CHECK(e.bytes == Approx(gigabytes * 1e9));
  CHECK(e.working == working);
}
