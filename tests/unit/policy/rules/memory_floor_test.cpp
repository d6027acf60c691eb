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
  // 7B × 2 bytes = 13.04 GiB → 14Gi model, same for gradients, + 4Gi batch + 2Gi overhead, × 1.2 → 39Gi.
  CHECK_THAT(warnings_text(r),
             Catch::Contains("memory-floor: container \"train\" memory limit 32Gi < 39Gi needed"));
  auto validated = gpuadmit::test::evaluate(r.fixed, "ml-team", Mode::kValidate, RuleSet{});
  REQUIRE(validated.ok());
  REQUIRE(validated->warnings.size() == 1);
  CHECK_THAT(validated->warnings[0].message, Catch::Contains("7B parameters × 16 bits"));
}

TEST_CASE("unreadable model annotations are reported, not ignored", "[rules][memory-floor]") {
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {gpuadmit.io/model-parameters: lots}}
spec: {containers: [{name: a, resources: {limits: {cpu: 1, memory: 64Gi, nvidia.com/gpu: 1}}}]}
)"));
  CHECK_THAT(warnings_text(r), Catch::Contains("unreadable model annotations"));
}
