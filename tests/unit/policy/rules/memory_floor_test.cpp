// memory-floor: a GPU job short of host memory is OOMKilled long after it started; the memory limit is
// weighed against what the model annotations say the job needs.
#include <catch2/catch.hpp>

#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::check;
using gpuadmit::test::warnings_text;

TEST_CASE("memory-floor estimates from model annotations and shows the arithmetic", "[rules][memory-floor]") {
  // The view lets guaranteed-qos set the train container's memory (32Gi) for memory-floor to weigh.
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto r =
      gpuadmit::test::check(gpuadmit::test::fixture("pods/gpu-pod-with-sidecar.yaml"), RuleSet{}, &view);
  // 7B bf16: weights 13.04 GiB + FP32 master copy 26.08 + gradients 13.04 + 4Gi batch + 2Gi overhead
  // = 58.2 GiB, × 1.5 → 88Gi.
  CHECK_THAT(warnings_text(r),
             Catch::Contains("memory-floor: container \"train\" memory limit 32Gi < 88Gi needed"));
  auto validated = gpuadmit::test::evaluate(r.fixed, "ml-team", Mode::kValidate, RuleSet{});
  REQUIRE(validated.ok());
  REQUIRE(validated->warnings.size() == 1);
  CHECK_THAT(validated->warnings[0].message,
             Catch::Contains("weights 13Gi (7B × 2 bytes, bf16) + FP32 master copy 26.1Gi"));
}

TEST_CASE("unreadable model annotations are reported, not ignored", "[rules][memory-floor]") {
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpuadmit.io/model-parameters: lots}}
spec: {containers: [{name: a, resources: {limits: {cpu: 1, memory: 64Gi, nvidia.com/gpu: 1}}}]}
)"));
  CHECK_THAT(warnings_text(r),
             Catch::Contains("memory-floor: annotation gpuadmit.io/model-parameters: \"lots\" is not a "
                             "parameter count such as 7B, 350M or 7e9"));
}

TEST_CASE("a served model's host memory is not weighed as training", "[rules][memory-floor]") {
  // 70B at FP32 training would need terabytes; served, its weights live in GPU memory (gpu-memory-fit).
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpuadmit.io/model-mode: inference, gpuadmit.io/model-parameters: 70B}}
spec: {containers: [{name: a, resources: {limits: {cpu: 1, memory: 64Gi, nvidia.com/gpu: 1}}}]}
)"));
  CHECK_THAT(warnings_text(r), !Catch::Contains("memory-floor"));
}

TEST_CASE("a trainer annotated with its optimizer and batch shape is sized from them",
          "[rules][memory-floor]") {
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {gpuadmit.io/model-parameters: 1B, gpuadmit.io/optimizer: adam, gpuadmit.io/batch-size: "32",
                gpuadmit.io/input-bytes: "602112"}
spec: {containers: [{name: a, resources: {limits: {cpu: 1, memory: 16Gi, nvidia.com/gpu: 1}}}]}
)"));
  // 1B × (4 + 4 + 8) bytes = 14.9 GiB + 18.4Mi batch + 2 GiB overhead = 16.9 GiB, × 1.5 → 26Gi.
  CHECK_THAT(warnings_text(r), Catch::Contains("memory limit 16Gi < 26Gi needed (1B params fp32 adam"));
}
