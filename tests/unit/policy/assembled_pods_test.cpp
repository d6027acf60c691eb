#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

namespace {

// KServe's own GPU sample (docs/samples/v1beta1/torchserve): the predictor is a PodSpec beside its
// `pytorch` member, which is the container; the ServingRuntime adds the image.
json inference_service(const std::string& gpu) {
  return gpuadmit::test::yaml(R"(
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: torchserve}
spec:
  predictor:
    minReplicas: 2
    pytorch:
      storageUri: gs://kfserving-examples/models/torchserve/image_classifier/v1
      resources:
        requests: {cpu: "2", memory: 8Gi}
        limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: )" +
                              gpu + R"(}
)");
}

}  // namespace

TEST_CASE("a KServe predictor's framework member is judged as its container and fixed in place",
          "[workloads][assembled]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json isvc = inference_service("1");
  const auto decision = run(isvc, Mode::kMutate, {}, &view);
  REQUIRE(decision.allowed());
  REQUIRE_FALSE(decision.patch.empty());
  for (const json& op : decision.patch) {
    const std::string path = op["path"];
    CAPTURE(path);
    // Container resources only: the pod-level parts are the runtime's to merge (partial).
    CHECK((path.rfind("/spec/predictor/pytorch/resources/", 0) == 0 || path == "/metadata/annotations"));
  }
  for (const auto& fix : decision.fixes) CHECK(fix.field.rfind("spec.predictor.pytorch.", 0) == 0);
  const json fixed = isvc.patch(decision.patch);
  const json& resources = fixed["spec"]["predictor"]["pytorch"]["resources"];
  CHECK(resources["requests"]["cpu"] == resources["limits"]["cpu"]);
  CHECK(resources["requests"]["memory"] == resources["limits"]["memory"]);
  // The missing toleration is said, not written: a KServe runtime's tolerations would be replaced by it.
  const bool warned = std::any_of(decision.warnings.begin(), decision.warnings.end(),
                                  [](const auto& w) { return w.rule == "gpu-tolerations"; });
  CHECK(warned);
  CHECK(run(fixed, Mode::kMutate, {}, &view).patch.empty());
}

TEST_CASE("a partial pod is still denied a fractional GPU, and what its runtime may mend only warns",
          "[workloads][assembled]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto fractional = run(inference_service("\"500m\""), Mode::kValidate, {}, &view);
  REQUIRE(fractional.violations.size() == 1);
  CHECK(fractional.violations[0].rule == "gpu-whole-units");
  CHECK(fractional.violations[0].field == "spec.predictor.pytorch.resources.limits");

  // Under a policy that enforces everything, the runtime's share (tolerations, node placement) is a
  // warning that says why; its volumes are its own, so a missing /dev/shm is not mentioned.
  const auto strict = gpuadmit::test::policy_with_spec(
      "  rules:\n    shm-size: {action: enforce}\n    gpu-tolerations: {action: enforce}\n"
      "    node-fit: {action: enforce}\n");
  const auto decision = run(inference_service("1"), Mode::kValidate, strict, &view);
  CHECK(decision.violations.empty());
  CHECK(std::none_of(decision.warnings.begin(), decision.warnings.end(),
                     [](const auto& f) { return f.rule == "shm-size"; }));
  for (const std::string rule : {"gpu-tolerations", "node-fit"}) {
    CAPTURE(rule);
    const auto w = std::find_if(decision.warnings.begin(), decision.warnings.end(),
                                [&](const auto& f) { return f.rule == rule; });
    REQUIRE(w != decision.warnings.end());
    CHECK_THAT(w->summary, Catch::StartsWith(rule + ": left to the runtime: "));
    CHECK_THAT(w->message, Catch::Contains("this pod is completed after admission"));
  }
}

TEST_CASE("a partial pod's unset cpu and memory are left to its runtime, not sized by gpuadmit",
          "[workloads][assembled]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  json isvc = inference_service("1");
  isvc["spec"]["predictor"]["pytorch"]["resources"] = {{"limits", {{"nvidia.com/gpu", 1}}}};
  const auto decision = run(isvc, Mode::kMutate, {}, &view);
  CHECK(decision.fixes.empty());
  CHECK(decision.patch.empty());
  const auto w = std::find_if(decision.warnings.begin(), decision.warnings.end(),
                              [](const auto& f) { return f.rule == "guaranteed-qos"; });
  REQUIRE(w != decision.warnings.end());
  CHECK_THAT(w->summary, Catch::StartsWith("guaranteed-qos: left to the runtime: "));
  // ml-team's quota constrains requests.cpu: the runtime's defaults may set it, so no denial either.
  const auto validated = run(isvc, Mode::kValidate, {}, &view);
  CHECK(validated.violations.empty());
  const auto q = std::find_if(validated.warnings.begin(), validated.warnings.end(),
                              [](const auto& f) { return f.rule == "gpu-quota"; });
  REQUIRE(q != validated.warnings.end());
  CHECK_THAT(q->summary,
             Catch::StartsWith("gpu-quota: left to the runtime: ResourceQuota gpu-quota requires "));
}

TEST_CASE("a partial pod whose image needs a newer driver than some nodes have is told, not pinned",
          "[workloads][assembled][cuda-driver]") {
  auto rules = gpuadmit::test::policy_with_spec("  rules:\n    cuda-driver: {action: enforce}\n");
  json isvc = inference_service("1");
  isvc["spec"]["predictor"]["pytorch"]["image"] = "nvidia/cuda:12.2.0-runtime-ubuntu22.04";
  const auto view = gpuadmit::test::gpu_cluster_view();
  const auto mutated = run(isvc, Mode::kMutate, rules, &view);
  for (const json& op : mutated.patch)
    CHECK(op["path"].get<std::string>().find("affinity") == std::string::npos);
  const auto validated = run(isvc, Mode::kValidate, rules, &view);
  CHECK(validated.violations.empty());
  const bool warned = std::any_of(validated.warnings.begin(), validated.warnings.end(),
                                  [](const auto& f) { return f.rule == "cuda-driver"; });
  CHECK(warned);
}

TEST_CASE("an object with no container at a podSpec path is not checked", "[workloads][assembled]") {
  json isvc = inference_service("1");
  isvc["spec"]["predictor"].erase("pytorch");
  const auto decision = run(isvc, Mode::kMutate);
  CHECK_FALSE(decision.evaluated);
  CHECK(decision.skipped_reason == "no pod at spec.predictor: no spec, or no container");
}
