#include <catch2/catch.hpp>

#include "gpuadmit/server/policy_resolution.hpp"

using gpuadmit::policy::Action;
using gpuadmit::server::LastValid;
using gpuadmit::server::Resolution;
using gpuadmit::server::ResolutionInput;
using gpuadmit::server::resolve_policies;
using nlohmann::json;

namespace {

json cluster_policy(const std::string& name, int generation, const json& rules) {
  return {{"apiVersion", "gpuadmit.io/v1alpha1"},
          {"kind", "ClusterGPUPolicy"},
          {"metadata", {{"name", name}, {"generation", generation}}},
          {"spec", {{"rules", rules}}}};
}

json team_policy(const std::string& ns, const std::string& name, const std::string& created,
                 const json& rules) {
  return {
      {"apiVersion", "gpuadmit.io/v1alpha1"},
      {"kind", "GPUPolicy"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"generation", 1}, {"creationTimestamp", created}}},
      {"spec", {{"rules", rules}}}};
}

struct World {
  std::vector<json> cluster;
  std::vector<json> namespaced;
  LastValid last_valid;

  Resolution resolve(const std::string& now = "2026-12-03T15:00:00Z") {
    const ResolutionInput input{std::make_shared<const gpuadmit::policy::RuleSet>(),
                                "embedded default policy",
                                "default",
                                &cluster,
                                &namespaced,
                                now};
    return resolve_policies(input, last_valid);
  }
};

const json* update_for(const Resolution& r, const std::string& name) {
  for (const auto& u : r.updates) {
    if (u.object["metadata"]["name"] == name) return &u.status;
  }
  return nullptr;
}

const json kEnforceFloor = {{"memory-floor", {{"action", "enforce"}}}};
const json kTypo = {{"memory-floor", {{"perGPU", "8Gi"}}}};

}  // namespace

TEST_CASE("without policy objects the fallback is in force and nothing is written", "[policy-resolution]") {
  World world;
  const Resolution r = world.resolve();
  CHECK(r.policies.cluster->memory_floor.action == Action::kWarn);
  CHECK(r.source == "embedded default policy");
  CHECK(r.updates.empty());
}

TEST_CASE("the named ClusterGPUPolicy is in force, loaded now, and its status is written once",
          "[policy-resolution]") {
  World world;
  world.cluster = {cluster_policy("default", 1, kEnforceFloor), cluster_policy("other", 1, json::object())};
  const Resolution r = world.resolve();
  CHECK(r.policies.cluster->memory_floor.action == Action::kEnforce);
  CHECK(r.source == "ClusterGPUPolicy/default (generation 1)");
  const json* status = update_for(r, "default");
  REQUIRE(status != nullptr);
  CHECK((*status)["active"] == true);
  CHECK((*status)["loadedAt"] == "2026-12-03T15:00:00Z");
  CHECK((*status)["conditions"][0]["reason"] == "Loaded");
  CHECK((*status)["conditions"][0]["status"] == "True");
  const json* other = update_for(r, "other");
  REQUIRE(other != nullptr);
  CHECK((*other)["active"] == false);
  CHECK((*other)["conditions"][0]["reason"] == "NotSelected");

  // What another replica finds a second later: the statuses it would write are already there.
  world.cluster[0]["status"] = *status;
  world.cluster[1]["status"] = *other;
  CHECK(world.resolve("2026-12-03T15:00:01Z").updates.empty());
}

TEST_CASE("an invalid version leaves the last valid one in force and says why", "[policy-resolution]") {
  World world;
  world.cluster = {cluster_policy("default", 1, kEnforceFloor)};
  world.resolve();
  world.cluster = {cluster_policy("default", 2, kTypo)};
  const Resolution r = world.resolve();
  CHECK(r.policies.cluster->memory_floor.action == Action::kEnforce);
  CHECK(r.source == "ClusterGPUPolicy/default (generation 1)");
  const json* status = update_for(r, "default");
  REQUIRE(status != nullptr);
  CHECK((*status)["active"] == true);
  CHECK((*status)["observedGeneration"] == 2);
  CHECK((*status)["conditions"][0]["reason"] == "Invalid");
  const std::string message = (*status)["conditions"][0]["message"];
  CHECK_THAT(message, Catch::Contains("spec.rules.memory-floor: unknown key \"perGPU\""));
  CHECK_THAT(message,
             Catch::Contains("The last valid version (generation 1) stays in force for the whole cluster."));
}

TEST_CASE("an invalid first version leaves the fallback in force", "[policy-resolution]") {
  World world;
  world.cluster = {cluster_policy("default", 1, kTypo)};
  const Resolution r = world.resolve();
  CHECK(r.source == "embedded default policy");
  const json* status = update_for(r, "default");
  REQUIRE(status != nullptr);
  CHECK((*status)["active"] == false);
  CHECK_THAT((*status)["conditions"][0]["message"].get<std::string>(),
             Catch::EndsWith("The embedded default policy stays in force."));
}

TEST_CASE("a GPUPolicy tightens its own namespace; a younger one there is superseded",
          "[policy-resolution]") {
  World world;
  world.namespaced = {team_policy("team-a", "strict", "2026-12-01T00:00:00Z", kEnforceFloor),
                      team_policy("team-a", "later", "2026-12-02T00:00:00Z", json::object())};
  const Resolution r = world.resolve();
  CHECK(r.policies.for_namespace("team-a").memory_floor.action == Action::kEnforce);
  CHECK(r.policies.for_namespace("team-b").memory_floor.action == Action::kWarn);
  CHECK((*update_for(r, "strict"))["conditions"][0]["reason"] == "Loaded");
  CHECK((*update_for(r, "later"))["conditions"][0]["reason"] == "Superseded");
}

TEST_CASE("a GPUPolicy the cluster policy outgrew no longer applies, and says so", "[policy-resolution]") {
  World world;
  world.namespaced = {team_policy("team-a", "t", "2026-12-01T00:00:00Z",
                                  {{"memory-floor", {{"action", "warn"}, {"perGpu", "16Gi"}}}})};
  CHECK(world.resolve().policies.for_namespace("team-a").memory_floor.per_gpu.to_string() == "16Gi");
  world.cluster = {cluster_policy("default", 1, {{"memory-floor", {{"action", "enforce"}}}})};
  const Resolution r = world.resolve();
  // Its last valid version is the same object: it is looser than the new cluster policy too.
  CHECK(r.policies.namespaces.count("team-a") == 0);
  const json* status = update_for(r, "t");
  REQUIRE(status != nullptr);
  CHECK((*status)["active"] == false);
  const std::string message = (*status)["conditions"][0]["message"];
  CHECK_THAT(message, Catch::Contains("warn is looser than the cluster policy's enforce"));
  CHECK_THAT(message,
             Catch::Contains("The cluster policy (ClusterGPUPolicy/default (generation 1)) applies"));
}

TEST_CASE(
    "the webhook's problems of a policy object keep the field path, and a GPUPolicy is judged against "
    "the cluster policy in force",
    "[policy-resolution]") {
  gpuadmit::policy::RuleSet cluster;
  cluster.memory_floor.action = Action::kEnforce;
  const auto problems = gpuadmit::server::policy_object_problems(
      team_policy("team-a", "loose", "2026-12-01T00:00:00Z", {{"memory-floor", {{"action", "warn"}}}}),
      cluster);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "spec.rules.memory-floor.action: warn is looser than the cluster policy's enforce; a GPUPolicy may "
        "only "
        "make a rule stricter");
  CHECK(
      gpuadmit::server::policy_object_problems(cluster_policy("default", 1, kEnforceFloor), cluster).empty());
}
