#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/config/policy_loader.hpp"

using gpuadmit::config::load_policy;

namespace {

// A policy whose spec.workloads is `workloads` (its entries start on line 5, two spaces in).
gpuadmit::Result<gpuadmit::policy::RuleSet> load_workloads(const std::string& workloads) {
  return load_policy("apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  workloads:\n" + workloads,
                     "p.yaml");
}

}  // namespace

TEST_CASE("a wrong path names the line and the column of its bad character", "[policy-yaml][workloads]") {
  auto [entry, located] = GENERATE(table<std::string, std::string>({
      // Plain, double-quoted, single-quoted, and in a flow mapping: the column is the bad '[' or '.'.
      {"    - apiGroup: ray.io\n      kinds: [RayCluster]\n      template: spec.groups[*.template\n",
       "p.yaml:7:28: spec.workloads[0].template: this [ is not closed"},
      {"    - apiGroup: ray.io\n      kinds: [RayCluster]\n      template: \"spec..template\"\n",
       "p.yaml:7:23: spec.workloads[0].template: expected a member name"},
      {"    - apiGroup: ray.io\n      kinds: [RayCluster]\n      template: 'spec.groups[]'\n",
       "p.yaml:7:29: spec.workloads[0].template: an empty []"},
      {"    - {apiGroup: ray.io, kinds: [RayCluster], template: spec.x y}\n",
       "p.yaml:5:63: spec.workloads[0].template: unexpected ' '"},
      {"    - apiGroup: ray.io\n      kinds: [RayCluster]\n      pods:\n        - template: spec.a[]\n",
       "p.yaml:8:27: spec.workloads[0].pods[0].template: an empty []"},
      {"    - apiGroup: x\n      kinds: [X]\n      pods:\n        - template: spec.template\n"
       "          replicas: {count: size - y}\n",
       "p.yaml:9:36: spec.workloads[0].pods[0].replicas.count: expected a whole number"},
  }));
  CAPTURE(entry);
  auto rules = load_workloads(entry);
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains(located));
}

TEST_CASE("a workload entry has one template or a pods list, each with a valid count",
          "[policy-yaml][workloads]") {
  auto [entry, error] = GENERATE(table<std::string, std::string>({
      {"    - {apiGroup: x, kinds: [X]}\n", "expected template"},
      {"    - {apiGroup: x, kinds: [X], template: spec.template, pods: [{template: spec.b}]}\n",
       "go inside each pods entry"},
      {"    - {apiGroup: x, kinds: [X], pods: []}\n", "expected a list of pod templates"},
      {"    - {apiGroup: x, kinds: [X], pods: [{name: a}]}\n", "expected template"},
      {"    - {apiGroup: x, kinds: [X], pods: [{template: a, replica: 2}]}\n", "unknown key \"replica\""},
      {"    - {apiGroup: x, kinds: [X], template: a, replicas: {min: m}}\n", "expected count"},
      {"    - {apiGroup: x, kinds: [X], template: a, replicas: {count: c, min: m - 1}}\n",
       "member path of a bound"},
      {"    - {apiGroup: x, kinds: [X], template: a, replicas: {count: c, times: n}}\n", "list of counts"},
      {"    - {apiGroup: x, kinds: [X], template: a, replicas: {count: c, absent: -1}}\n", "absent"},
      {"    - {apiGroup: x, kinds: [X], template: a, replicas: [1]}\n", "expected a count"},
      {"    - {apiGroup: x, kinds: [X], pods: [{template: a, podSpec: b}]}\n", "not both"},
      {"    - {apiGroup: x, kinds: [X], pods: [{template: a, containers: [model]}]}\n", "go with podSpec"},
      {"    - {apiGroup: x, kinds: [X], pods: [{podSpec: a, containers: [$.model]}]}\n", "member paths"},
      {"    - {apiGroup: x, kinds: [X], pods: [{podSpec: a, partial: maybe}]}\n", "true or false"},
  }));
  CAPTURE(entry);
  auto rules = load_workloads(entry);
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains(error) && Catch::StartsWith("p.yaml:"));
}

TEST_CASE("today's template and replicas strings still load, as one pod template",
          "[policy-yaml][workloads]") {
  auto rules = load_workloads(
      "    - {apiGroup: batch, kinds: [Job], template: spec.template, replicas: parallelism}\n");
  REQUIRE(rules.ok());
  REQUIRE(rules->workloads.size() == 1);
  const auto& pods = rules->workloads[0].pods;
  REQUIRE(pods.size() == 1);
  CHECK(pods[0].path.text == "spec.template");
  REQUIRE(pods[0].replicas.count);
  CHECK(pods[0].replicas.count->text == "parallelism");
  // The same as the built-in Job entry.
  CHECK(rules->workloads[0] == gpuadmit::policy::default_workload_kinds()[2]);
}

TEST_CASE("a pods list reads names, paths and replicas objects", "[policy-yaml][workloads]") {
  auto rules = load_workloads(R"(    - apiGroup: ray.io
      kinds: [RayCluster]
      pods:
        - {name: head, template: spec.headGroupSpec.template}
        - template: "spec.workerGroupSpecs[groupName=*].template"
          replicas: {count: replicas, absent: 0, min: minReplicas, max: maxReplicas, times: [numOfHosts, 2]}
)");
  REQUIRE(rules.ok());
  const auto& pods = rules->workloads.at(0).pods;
  REQUIRE(pods.size() == 2);
  CHECK(pods[0].name == "head");
  CHECK_FALSE(pods[0].replicas.count);
  const auto& r = pods[1].replicas;
  CHECK(r.absent == 0);
  REQUIRE(r.min);
  CHECK(r.min->members == std::vector<std::string>{"minReplicas"});
  REQUIRE(r.times.size() == 2);
  CHECK(r.times[1].number == 2);
}
