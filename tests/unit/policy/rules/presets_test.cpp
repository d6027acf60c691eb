// presets: bundles chosen by pod labels or by GPU request that only fill gaps; what the user set is kept,
// and the validating webhook says which values it kept.
#include <catch2/catch.hpp>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

TEST_CASE("a preset selected by label adds what is missing and keeps the user's values", "[presets]") {
  const auto rules = gpuadmit::test::policy_with_spec(R"(
  presets:
    - name: pytorch
      selector: {matchLabels: {framework: pytorch}}
      env:
        - {name: PYTORCH_CUDA_ALLOC_CONF, value: "expandable_segments:True"}
        - {name: NCCL_DEBUG, value: WARN}
      tolerations: [{key: example.com/dedicated, operator: Equal, value: ml, effect: NoSchedule}]
      nodeSelector: {example.com/pool: training}
      annotations: {example.com/team: ml-platform}
    - name: datasets
      selector: {gpu: true}
      volumes: [{name: datasets, persistentVolumeClaim: {claimName: datasets, readOnly: true}}]
      volumeMounts: [{name: datasets, mountPath: /data, readOnly: true}]
    - name: never
      selector: {matchLabels: {framework: jax}}
      env: [{name: XLA_FLAGS, value: "--x"}]
)");
  json pod = gpuadmit::test::fixture("pods/good-gpu-pod.yaml");
  pod["metadata"]["labels"] = {{"framework", "pytorch"}};
  pod["spec"]["containers"][0]["env"] = json::array({{{"name", "NCCL_DEBUG"}, {"value", "INFO"}}});
  const auto mutated = run(pod, Mode::kMutate, rules);
  const json fixed = pod.patch(mutated.patch);
  const json& env = fixed["spec"]["containers"][0]["env"];
  CHECK(env == json::array({{{"name", "NCCL_DEBUG"}, {"value", "INFO"}},
                            {{"name", "PYTORCH_CUDA_ALLOC_CONF"}, {"value", "expandable_segments:True"}}}));
  CHECK(fixed["spec"]["nodeSelector"]["example.com/pool"] == "training");
  CHECK(fixed["spec"]["tolerations"].size() == 2);
  CHECK(fixed["spec"]["volumes"].size() == 2);
  CHECK(fixed["spec"]["containers"][0]["volumeMounts"].size() == 2);
  CHECK(fixed["metadata"]["annotations"]["gpuadmit.io/applied"] == "pytorch,datasets");
  CHECK(fixed["metadata"]["annotations"]["example.com/team"] == "ml-platform");
  CHECK(fixed["metadata"]["annotations"]["gpuadmit.io/mutated-by"] == "presets");
  REQUIRE(mutated.notices.size() == 1);  // one line for everything the presets added
  CHECK_THAT(mutated.notices[0],
             Catch::StartsWith("presets pytorch,datasets added: env PYTORCH_CUDA_ALLOC_CONF"));

  // The user's NCCL_DEBUG stays, and the validating webhook says so once; reinvocation changes nothing.
  const auto validated = run(fixed, Mode::kValidate, rules);
  CHECK(validated.allowed());
  REQUIRE(validated.warnings.size() == 1);
  CHECK(validated.warnings[0].rule == "presets");
  CHECK_THAT(validated.warnings[0].summary, Catch::Contains("env NCCL_DEBUG") && Catch::Contains("pytorch"));
  CHECK(run(fixed, Mode::kMutate, rules).patch.empty());
}
