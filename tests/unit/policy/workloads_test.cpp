#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/k8s/qos.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

namespace {

const gpuadmit::policy::RuleSet kRules;

// The template at a JSON pointer, as the pod it becomes.
json template_pod(const json& object, const std::string& pointer) {
  const json& t = object.at(json::json_pointer(pointer));
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", t.value("metadata", json::object())},
          {"spec", t["spec"]}};
}

gpuadmit::k8s::QosClass qos_of(const json& pod) {
  auto parsed = gpuadmit::k8s::parse_pod(pod);
  if (!parsed) FAIL(parsed.error().message);
  return gpuadmit::k8s::compute_qos(*parsed);
}

}  // namespace

TEST_CASE("every workload kind gets its pod templates fixed, and only them", "[workloads]") {
  auto [file, templates] = GENERATE(table<std::string, std::vector<std::string>>({
      {"deployment.yaml", {"/spec/template"}},
      {"statefulset.yaml", {"/spec/template"}},
      {"daemonset.yaml", {"/spec/template"}},
      {"replicaset.yaml", {"/spec/template"}},
      {"job.yaml", {"/spec/template"}},
      {"cronjob.yaml", {"/spec/jobTemplate/spec/template"}},
      {"pytorchjob.yaml",
       {"/spec/pytorchReplicaSpecs/Master/template", "/spec/pytorchReplicaSpecs/Worker/template"}},
      {"raycluster.yaml",
       {"/spec/headGroupSpec/template", "/spec/workerGroupSpecs/0/template",
        "/spec/workerGroupSpecs/1/template"}},
      {"rayjob.yaml",
       {"/spec/rayClusterSpec/headGroupSpec/template", "/spec/rayClusterSpec/workerGroupSpecs/0/template"}},
      {"rayservice.yaml",
       {"/spec/rayClusterConfig/headGroupSpec/template",
        "/spec/rayClusterConfig/workerGroupSpecs/0/template"}},
      {"leaderworkerset.yaml",
       {"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"}},
      {"jobset.yaml",
       {"/spec/replicatedJobs/0/template/spec/template", "/spec/replicatedJobs/1/template/spec/template"}},
      {"volcano-job.yaml", {"/spec/tasks/0/template", "/spec/tasks/1/template"}},
      {"notebook.yaml", {"/spec/template"}},
      {"trainingruntime.yaml", {"/spec/template/spec/replicatedJobs/0/template/spec/template"}},
  }));
  CAPTURE(file);
  const json object = gpuadmit::test::fixture("workloads/" + file);
  // With a view: raise-requests raises only what a node in view holds.
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto mutated = run(object, Mode::kMutate, kRules, &view);
  REQUIRE(mutated.allowed());
  REQUIRE_FALSE(mutated.patch.empty());
  for (const json& op : mutated.patch) {
    const std::string path = op["path"];
    CAPTURE(path);
    const bool in_template = std::any_of(templates.begin(), templates.end(),
                                         [&](const std::string& t) { return path.rfind(t + "/", 0) == 0; });
    CHECK((in_template || path.rfind("/metadata/annotations", 0) == 0));
  }
  for (const auto& f : mutated.fixes) CHECK(f.field.rfind("spec.", 0) == 0);

  const json fixed = object.patch(mutated.patch);
  for (const std::string& t : templates) {
    CAPTURE(t);
    CHECK(qos_of(template_pod(fixed, t)) == gpuadmit::k8s::QosClass::kGuaranteed);
    CHECK(fixed.at(json::json_pointer(t + "/metadata/annotations/gpuadmit.io~1mutated-by")) ==
          "gpu-tolerations,guaranteed-qos,shm-size");
  }
  CHECK(fixed["metadata"]["annotations"]["gpuadmit.io/mutated-by"] ==
        "gpu-tolerations,guaranteed-qos,shm-size");

  // Reinvocation changes nothing, and the validating webhook allows the result.
  const auto again = run(fixed, Mode::kMutate, kRules, &view);
  CHECK(again.fixes.empty());
  CHECK(again.patch.empty());
  CHECK(run(fixed, Mode::kValidate, kRules, &view).allowed());
}

TEST_CASE("a denial on a workload names the template's field", "[workloads]") {
  auto [file, pointer, field, tag] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"deployment.yaml", "/spec/template", "spec.template.spec.containers[0].resources.limits", ""},
      {"cronjob.yaml", "/spec/jobTemplate/spec/template",
       "spec.jobTemplate.spec.template.spec.containers[0].resources.limits", ""},
      {"pytorchjob.yaml", "/spec/pytorchReplicaSpecs/Worker/template",
       "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits", "Worker: "},
      {"raycluster.yaml", "/spec/workerGroupSpecs/1/template",
       "spec.workerGroupSpecs[1].template.spec.containers[0].resources.limits",
       "workerGroupSpecs[gpu-a100-hosts]: "},
      {"leaderworkerset.yaml", "/spec/leaderWorkerTemplate/leaderTemplate",
       "spec.leaderWorkerTemplate.leaderTemplate.spec.containers[0].resources.limits", "leader: "},
      {"jobset.yaml", "/spec/replicatedJobs/0/template/spec/template",
       "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits",
       "replicatedJobs[workers]: "},
      {"volcano-job.yaml", "/spec/tasks/1/template",
       "spec.tasks[1].template.spec.containers[0].resources.limits", "tasks[mpiworker]: "},
  }));
  CAPTURE(file);
  json object = gpuadmit::test::fixture("workloads/" + file);
  object[json::json_pointer(pointer + "/spec/containers/0/resources/limits/nvidia.com~1gpu")] = "500m";
  const auto decision = run(object, Mode::kMutate);
  REQUIRE(decision.violations.size() == 1);
  CHECK(decision.violations[0].rule == "gpu-whole-units");
  CHECK(decision.violations[0].field == field);
  // Warnings name the template when the object has several, or when the field shows only a list index.
  CHECK_THAT(decision.violations[0].summary, Catch::StartsWith(tag + "gpu-whole-units: "));
}

TEST_CASE("on UPDATE an unchanged template is not judged again", "[workloads]") {
  const json before = gpuadmit::test::fixture("workloads/deployment.yaml");
  json after = before;
  after["metadata"]["labels"] = {{"team", "vision"}};
  after["spec"]["replicas"] = 5;
  auto unchanged = gpuadmit::test::evaluate(after, "ml-team", Mode::kMutate, kRules, nullptr, &before);
  REQUIRE(unchanged.ok());
  CHECK_FALSE(unchanged->evaluated);
  CHECK(unchanged->patch.empty());

  after["spec"]["template"]["spec"]["containers"][0]["image"] = "nvcr.io/nvidia/pytorch:24.05-py3";
  auto changed = gpuadmit::test::evaluate(after, "ml-team", Mode::kMutate, kRules, nullptr, &before);
  REQUIRE(changed.ok());
  CHECK(changed->evaluated);
  CHECK_FALSE(changed->patch.empty());
}

TEST_CASE("a pod whose controller is a judged workload is still denied but not warned twice", "[workloads]") {
  json pod = gpuadmit::test::fixture("pods/resnet50-no-gpu.yaml");  // gpu-intent warns on it
  REQUIRE_FALSE(run(pod, Mode::kValidate).warnings.empty());
  auto [owner_api, owner_kind, suppressed] = GENERATE(table<std::string, std::string, bool>({
      {"apps/v1", "ReplicaSet", true},
      {"batch/v1", "Job", true},
      {"kubeflow.org/v1", "PyTorchJob", true},
      {"ray.io/v1", "RayCluster", true},
      {"argoproj.io/v1alpha1", "Workflow", true},
      {"sparkoperator.k8s.io/v1beta2", "SparkApplication", false},  // not judged: its pods were never checked
  }));
  CAPTURE(owner_kind);
  pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", owner_api},
                                                     {"kind", owner_kind},
                                                     {"name", "owner"},
                                                     {"uid", "u"},
                                                     {"controller", true}}});
  const auto decision = run(pod, Mode::kValidate);
  CHECK(decision.warnings.empty() == suppressed);
  CHECK(decision.controller == (suppressed ? owner_kind + "/owner" : ""));

  json fractional = gpuadmit::test::fixture("pods/fractional-gpu.yaml");
  fractional["metadata"]["ownerReferences"] = pod["metadata"]["ownerReferences"];
  CHECK_FALSE(run(fractional, Mode::kValidate).allowed());
}

TEST_CASE("kinds outside the policy's workload list are not judged", "[workloads]") {
  const json service = {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", "x"}}}};
  CHECK_FALSE(run(service, Mode::kMutate).evaluated);
  const auto rules = gpuadmit::test::policy_with_spec(
      "  workloads:\n    - {apiGroup: batch, kinds: [Job], template: spec.template}\n");
  const json deployment = gpuadmit::test::fixture("workloads/deployment.yaml");
  CHECK_FALSE(run(deployment, Mode::kMutate, rules).evaluated);
  CHECK(run(gpuadmit::test::fixture("workloads/job.yaml"), Mode::kMutate, rules).changed());
}

TEST_CASE("presets are validated when the policy loads", "[presets]") {
  auto [spec, error] = GENERATE(table<std::string, std::string>({
      {"  presets:\n    - name: a\n      env: [{name: X, value: y}]\n", "needs a selector"},
      {"  presets:\n    - selector: {gpu: true}\n", "needs a name"},
      {"  presets:\n    - {name: a, selector: {gpu: true}}\n    - {name: a, selector: {gpu: true}}\n",
       "another preset"},
      {"  presets:\n    - {name: a, selector: {gpu: true}, env: [{value: y}]}\n",
       "expected a string \"name\""},
      {"  presets:\n    - {name: a, selector: {gpu: true}, containers: some}\n", "expected one of gpu, all"},
      {"  presets:\n    - {name: a, selector: {gpu: true}, resurces: {}}\n", "unknown key \"resurces\""},
      {"  workloads:\n    - {apiGroup: apps, kinds: [Pod], template: spec.template}\n", "judged as itself"},
      {"  workloads:\n    - {apiGroup: apps, kinds: [X], template: spec..template}\n", "empty step"},
  }));
  CAPTURE(spec);
  auto rules = gpuadmit::config::load_policy("apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n" + spec,
                                             "p.yaml");
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains(error) && Catch::StartsWith("p.yaml:"));
}

TEST_CASE("mutation is idempotent for every workload fixture", "[idempotence][workloads]") {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUADMIT_FIXTURES_DIR) + "/workloads")) {
    if (entry.path().extension() != ".yaml") continue;  // SOURCES
    INFO(entry.path().string());
    const json original = gpuadmit::test::yaml(gpuadmit::test::read_text(entry.path().string()));
    const auto once = run(original, Mode::kMutate);
    const json fixed = original.patch(once.patch);
    const auto twice = run(fixed, Mode::kMutate);
    CHECK(twice.fixes.empty());
    CHECK(twice.patch.empty());
  }
}
