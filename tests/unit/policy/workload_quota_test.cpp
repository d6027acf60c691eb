// gpu-quota across a workload's templates: a JobSet's replicated jobs, a RayCluster's head and workers run
// at once, so their GPUs count together against the namespace's quota
// (tests/fixtures/cluster/gpu-cluster.yaml: namespace ml-team has 2 of 8 requests.nvidia.com/gpu left).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Decision;
using gpuadmit::policy::Finding;
using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

namespace {

std::vector<std::string> quota_messages(const Decision& d) {
  std::vector<std::string> out;
  for (const auto* list : {&d.violations, &d.warnings}) {
    for (const Finding& f : *list) {
      if (f.rule == "gpu-quota") out.push_back(f.message);
    }
  }
  return out;
}

json jobset(int a, int b) {
  const auto job = [](const char* name, int gpus) {
    return json{{"name", name},
                {"replicas", 1},
                {"template", {{"spec", {{"template", gpuadmit::test::gpu_pod_template(gpus)}}}}}};
  };
  return {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
          {"kind", "JobSet"},
          {"metadata", {{"name", "train"}}},
          {"spec", {{"replicatedJobs", json::array({job("a", a), job("b", b)})}}}};
}

}  // namespace

TEST_CASE("a JobSet whose replicated jobs each fit the GPU quota but not together is told so",
          "[workloads][quota]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto messages = quota_messages(run(jobset(2, 1), Mode::kValidate, {}, &view));
  REQUIRE(messages.size() == 1);
  CHECK_THAT(messages[0], Catch::Contains("together ask for 3"));
  CHECK_THAT(messages[0], Catch::Contains("replicatedJobs[a]: 1 × 2, replicatedJobs[b]: 1 × 1"));
  CHECK_THAT(messages[0], Catch::Contains("2 of 8 requests.nvidia.com/gpu left"));
}

TEST_CASE("templates whose GPUs fit the quota together get no quota finding", "[workloads][quota]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  CHECK(quota_messages(run(jobset(1, 1), Mode::kValidate, {}, &view)).empty());
}

TEST_CASE("a template over the quota by itself is reported once, not again with the others",
          "[workloads][quota]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const auto messages = quota_messages(run(jobset(3, 1), Mode::kValidate, {}, &view));
  REQUIRE(messages.size() == 1);
  CHECK_THAT(messages[0], !Catch::Contains("together"));
}

TEST_CASE("a RayCluster's head and workers count together against the quota", "[workloads][quota]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json cluster = {
      {"apiVersion", "ray.io/v1"},
      {"kind", "RayCluster"},
      {"metadata", {{"name", "ray"}}},
      {"spec",
       {{"headGroupSpec", {{"template", gpuadmit::test::gpu_pod_template(1)}}},
        {"workerGroupSpecs", json::array({{{"groupName", "gpu"},
                                           {"replicas", 2},
                                           {"template", gpuadmit::test::gpu_pod_template(1)}}})}}}};
  // Two workers alone fit the 2 GPUs left; with the head they need 3.
  const auto messages = quota_messages(run(cluster, Mode::kValidate, {}, &view));
  REQUIRE(messages.size() == 1);
  CHECK_THAT(messages[0], Catch::Contains("head: 1 × 1, workerGroupSpecs[gpu]: 2 × 1"));
}

TEST_CASE("an Argo workflow's steps run one after another, so their GPUs are not summed",
          "[workloads][quota]") {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  json step = gpuadmit::test::gpu_pod_template(2)["spec"]["containers"][0];
  const json wf = {{"apiVersion", "argoproj.io/v1alpha1"},
                   {"kind", "Workflow"},
                   {"metadata", {{"name", "wf"}}},
                   {"spec",
                    {{"tolerations", gpuadmit::test::gpu_pod_template(2)["spec"]["tolerations"]},
                     {"templates", json::array({{{"name", "first"}, {"container", step}},
                                                {{"name", "second"}, {"container", step}}})}}}};
  const auto decision = run(wf, Mode::kValidate, {}, &view);
  CHECK(decision.evaluated);
  CHECK(quota_messages(decision).empty());
}
