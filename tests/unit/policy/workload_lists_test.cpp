#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Decision;
using gpuadmit::policy::Finding;
using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

namespace {

// A RayCluster whose head and first worker group are right, and whose gpu-group asks for `gpu`.
json ray_cluster(const std::string& gpu) {
  return gpuadmit::test::yaml(R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray:2.9.0, resources: {limits: {cpu: "2", memory: 8Gi}}}]
  workerGroupSpecs:
  - groupName: cpu-group
    replicas: 2
    template:
      spec:
        containers: [{name: ray-worker, image: rayproject/ray:2.9.0, resources: {limits: {cpu: "2", memory: 8Gi}}}]
  - groupName: gpu-group
    replicas: 1
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray-ml:2.9.0-gpu
          resources:
            requests: {cpu: "4", memory: 16Gi}
            limits: {cpu: "8", memory: 32Gi, nvidia.com/gpu: )" +
                              gpu + R"(}
)");
}

// The gpu-quota finding of a decision (the view's namespace has 2 of 8 GPUs left), or "".
std::string quota_text(const Decision& d) {
  for (const auto* list : {&d.violations, &d.warnings}) {
    for (const Finding& f : *list) {
      if (f.rule == "gpu-quota") return f.message;
    }
  }
  return {};
}

}  // namespace

TEST_CASE("a list step judges every item's template, and the messages name the item", "[workloads][lists]") {
  const auto decision = run(ray_cluster("\"500m\""), Mode::kMutate);
  REQUIRE(decision.violations.size() == 1);
  const Finding& f = decision.violations[0];
  CHECK(f.rule == "gpu-whole-units");
  // The field is the API server's, with the index; what the user reads names the group.
  CHECK(f.field == "spec.workerGroupSpecs[1].template.spec.containers[0].resources.limits");
  CHECK_THAT(f.summary, Catch::StartsWith("workerGroupSpecs[gpu-group]: gpu-whole-units: "));
  CHECK_THAT(f.message, Catch::StartsWith("workerGroupSpecs[gpu-group]: container \"ray-worker\""));
}

TEST_CASE("patches address list items by index and stay inside the item", "[workloads][lists]") {
  const json object = ray_cluster("1");
  const auto view = gpuadmit::test::view_of("gpu-cluster");  // guaranteed-qos raises requests within a node
  const auto decision = run(object, Mode::kMutate, {}, &view);
  REQUIRE(decision.allowed());
  REQUIRE_FALSE(decision.patch.empty());
  for (const json& op : decision.patch) {
    const std::string path = op["path"];
    CAPTURE(path);
    CHECK((path.rfind("/spec/workerGroupSpecs/1/template/", 0) == 0 ||
           path.rfind("/metadata/annotations", 0) == 0));
  }
  for (const auto& fix : decision.fixes)
    CHECK_THAT(fix.description, Catch::StartsWith("workerGroupSpecs[gpu-group]: "));
  const json fixed = object.patch(decision.patch);
  CHECK(
      fixed["spec"]["workerGroupSpecs"][1]["template"]["metadata"]["annotations"]["gpuadmit.io/mutated-by"] ==
      "gpu-tolerations,guaranteed-qos,shm-size");
  CHECK_FALSE(fixed["spec"]["workerGroupSpecs"][0]["template"].contains("metadata"));
  CHECK(run(fixed, Mode::kMutate, {}, &view).patch.empty());
}

TEST_CASE("a keyed selector, an index and a star select the items they name", "[workloads][lists]") {
  auto [path, judged] = GENERATE(table<std::string, std::vector<std::string>>({
      {"spec.tasks[name=workers].template", {"spec.tasks[1]"}},
      {"spec.tasks[0].template", {"spec.tasks[0]"}},
      {"spec.tasks[7].template", {}},
      {"spec.tasks[*].template", {"spec.tasks[0]", "spec.tasks[1]"}},
      {"spec.tasks[role=*].template", {"spec.tasks[0]", "spec.tasks[1]"}},
  }));
  CAPTURE(path);
  const auto rules = gpuadmit::test::policy_with_spec(
      "  workloads:\n    - {apiGroup: example.com, kinds: [Job], template: \"" + path + "\"}\n");
  json job = {{"apiVersion", "example.com/v1"}, {"kind", "Job"}, {"metadata", {{"name", "j"}}}};
  for (const char* name : {"ps", "workers"}) {
    json t = gpuadmit::test::gpu_pod_template(1);
    t["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "500m";
    job["spec"]["tasks"].push_back({{"name", name}, {"template", t}});
  }
  const auto decision = run(job, Mode::kMutate, rules);
  REQUIRE(decision.violations.size() == judged.size());
  for (std::size_t i = 0; i < judged.size(); ++i)
    CHECK(decision.violations[i].field.rfind(judged[i] + ".template.", 0) == 0);
  if (judged.empty()) CHECK_FALSE(decision.evaluated);
  // [*] labels an item by its name, [role=*] by its role member, falling back to the index.
  if (path == "spec.tasks[*].template")
    CHECK_THAT(decision.violations[1].summary, Catch::StartsWith("tasks[workers]: "));
  if (path == "spec.tasks[role=*].template")
    CHECK_THAT(decision.violations[1].summary, Catch::StartsWith("tasks[1]: "));
}

TEST_CASE("a path that meets a list where it expects a map says to write [*]", "[workloads][lists]") {
  const auto rules = gpuadmit::test::policy_with_spec(
      "  workloads:\n    - {apiGroup: ray.io, kinds: [RayCluster], template: "
      "spec.workerGroupSpecs.template}\n");
  const auto decision = run(ray_cluster("1"), Mode::kMutate, rules);
  CHECK_FALSE(decision.evaluated);
  CHECK(decision.skipped_reason == "spec.workerGroupSpecs is a list: write spec.workerGroupSpecs[*]");
}

TEST_CASE("each template counts the pods it runs at once, as its controller does", "[workloads][lists]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");  // namespace ml-team: 2 of 8 GPUs left
  auto [object, pods] = GENERATE(table<json, std::string>({
      // KubeRay: replicas within [minReplicas, maxReplicas], times numOfHosts.
      {{{"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"spec",
         {{"workerGroupSpecs",
           {{{"groupName", "g"},
             {"replicas", 3},
             {"minReplicas", 1},
             {"maxReplicas", 2},
             {"numOfHosts", 2},
             {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}},
       "its 4 pods"},
      {{{"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"spec",
         {{"workerGroupSpecs",
           {{{"groupName", "g"}, {"minReplicas", 3}, {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}},
       "its 3 pods"},
      {{{"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"spec",
         {{"workerGroupSpecs", {{{"groupName", "g"}, {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}},
       ""},  // no replicas and no minReplicas: KubeRay starts none
      // LeaderWorkerSet: replicas groups of one leader and size - 1 workers.
      {{{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
        {"kind", "LeaderWorkerSet"},
        {"spec",
         {{"replicas", 2},
          {"leaderWorkerTemplate", {{"size", 4}, {"workerTemplate", gpuadmit::test::gpu_pod_template(1)}}}}}},
       "its 6 pods"},
      // JobSet: replicas × the Job's parallelism.
      {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
        {"kind", "JobSet"},
        {"spec",
         {{"replicatedJobs",
           {{{"name", "w"},
             {"replicas", 2},
             {"template",
              {{"spec", {{"parallelism", 3}, {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}}}}}},
       "its 6 pods"},
      // A Trainer runtime is a template for TrainJobs, never run as it is.
      {{{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
        {"kind", "TrainingRuntime"},
        {"spec",
         {{"template",
           {{"spec",
             {{"replicatedJobs",
               {{{"name", "node"},
                 {"template", {{"spec", {{"template", gpuadmit::test::gpu_pod_template(8)}}}}}}}}}}}}}}},
       ""},
      // Hostile counts: 2^63 reads as the most negative integer, and nothing overflows.
      {{{"apiVersion", "leaderworkerset.x-k8s.io/v1"},
        {"kind", "LeaderWorkerSet"},
        {"spec",
         {{"replicas", 2},
          {"leaderWorkerTemplate",
           {{"size", 9223372036854775808ULL}, {"workerTemplate", gpuadmit::test::gpu_pod_template(1)}}}}}},
       ""},
      {{{"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"spec",
         {{"workerGroupSpecs",
           {{{"groupName", "g"},
             {"replicas", 3},
             {"maxReplicas", -9223372036854775807LL},
             {"numOfHosts", 9223372036854775807LL},
             {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}},
       ""},
      {{{"apiVersion", "ray.io/v1"},
        {"kind", "RayCluster"},
        {"spec",
         {{"workerGroupSpecs",
           {{{"groupName", "g"},
             {"replicas", 9223372036854775807LL},
             {"numOfHosts", 9223372036854775807LL},
             {"template", gpuadmit::test::gpu_pod_template(1)}}}}}}},
       "its 1000000000 pods"},
  }));
  CAPTURE(object);
  object["metadata"] = {{"name", "w"}};
  const auto decision = run(object, Mode::kValidate, {}, &view);
  CHECK(decision.evaluated);  // a row expecting no quota finding must still have judged the template
  const std::string quota = quota_text(decision);
  if (pods.empty()) {
    CHECK(quota.empty());
  } else {
    CHECK_THAT(quota, Catch::Contains(pods));
  }
}

TEST_CASE("on UPDATE a keyed item is matched by its label, so reordering is no change",
          "[workloads][lists]") {
  const json before = ray_cluster("1");
  json reordered = before;
  std::swap(reordered["spec"]["workerGroupSpecs"][0], reordered["spec"]["workerGroupSpecs"][1]);
  auto same = gpuadmit::test::evaluate(reordered, "ml-team", Mode::kMutate, {}, nullptr, &before);
  REQUIRE(same.ok());
  CHECK_FALSE(same->evaluated);
  CHECK(same->skipped_reason == "pod templates unchanged");

  // A changed item alone is judged, and its patch has the item's new index.
  reordered["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] =
      "rayproject/ray-ml:2.10.0-gpu";
  auto changed = gpuadmit::test::evaluate(reordered, "ml-team", Mode::kMutate, {}, nullptr, &before);
  REQUIRE(changed.ok());
  REQUIRE_FALSE(changed->patch.empty());
  for (const json& op : changed->patch) {
    const std::string path = op["path"];
    CHECK((path.rfind("/spec/workerGroupSpecs/0/", 0) == 0 || path.rfind("/metadata/", 0) == 0));
  }
}

TEST_CASE("an object with more templates than the limit is an error, never an allow", "[workloads][lists]") {
  json rc = ray_cluster("1");
  json& groups = rc["spec"]["workerGroupSpecs"];
  while (groups.size() < 1025) groups.push_back(groups[0]);
  CHECK_THROWS_WITH(run(rc, Mode::kValidate), Catch::Contains("more than 1024 pod templates"));
  groups.erase(groups.begin() + 1000, groups.end());
  CHECK_NOTHROW(run(rc, Mode::kValidate));
}

TEST_CASE("a Ray group that declares GPUs to Ray but asks Kubernetes for none is warned",
          "[workloads][lists]") {
  auto [params, warned] = GENERATE(table<json, bool>({
      {{{"num-gpus", "1"}}, true},
      {{{"resources", "\"{\\\"GPU\\\": 2}\""}}, true},
      {{{"num-gpus", "0"}}, false},
      {{{"num-gpus", "0.0"}}, false},
      {{{"num-gpus", "0.5"}}, true},
      {{{"num-cpus", "4"}}, false},
  }));
  CAPTURE(params);
  json rc = ray_cluster("1");
  rc["spec"]["workerGroupSpecs"][0]["rayStartParams"] = params;  // cpu-group: no GPU asked
  rc["spec"]["workerGroupSpecs"][1]["rayStartParams"] = params;  // gpu-group: asks for its GPU
  const auto decision = run(rc, Mode::kValidate);
  std::vector<std::string> ray_warnings;
  for (const Finding& w : decision.warnings) {
    if (w.summary.find("Ray is told") != std::string::npos) ray_warnings.push_back(w.summary);
  }
  if (!warned) {
    CHECK(ray_warnings.empty());
    return;
  }
  REQUIRE(ray_warnings.size() == 1);
  CHECK_THAT(ray_warnings[0], Catch::StartsWith("workerGroupSpecs[cpu-group]: gpu-intent: Ray is told "));
}
