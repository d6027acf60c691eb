// gpuadmit why's core: each stuck or killed object of tests/fixtures/why explained in the order of the usual
// diagnosis, quoting what Kubernetes said and naming the rule that would have caught it at admission.
#include <catch2/catch.hpp>

#include "gpuadmit/admission/why.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using nlohmann::json;

gpuadmit::admission::Diagnosis why(const std::string& kind, const std::string& name) {
  static const gpuadmit::policy::RuleSet rules;  // PolicySet::of refers to it
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json objects = gpuadmit::test::fixture("why/objects.yaml");
  gpuadmit::admission::WhyInput input;
  for (const json& o : objects["items"]) {
    if (o["kind"] == "Event") {
      input.events.push_back(o);
    } else if (o["kind"] == kind && o["metadata"]["name"] == name) {
      input.object = o;
    } else {
      input.owned.push_back(o);
    }
  }
  auto d = gpuadmit::admission::diagnose(input, gpuadmit::policy::PolicySet::of(rules), &view);
  REQUIRE(d.ok());
  return *d;
}

}  // namespace

TEST_CASE("why explains each cause first with Kubernetes' words, then the rule and the fix", "[why]") {
  const auto [kind, name, state, title, quote, rule] =
      GENERATE(table<std::string, std::string, std::string, std::string, std::string, std::string>({
          {"Pod", "eight-gpus", "Pending", "not scheduled", "3 Insufficient nvidia.com/gpu", "node-fit"},
          {"Pod", "untolerated", "Pending", "not scheduled", "untolerated taint {nvidia.com/gpu: present}",
           "gpu-tolerations"},
          {"Pod", "oom", "Running", "OOMKilled", "container \"train\": terminated OOMKilled, exit code 137",
           "memory-floor"},
          {"Pod", "evicted", "Failed (Evicted)", "evicted", "The node was low on resource: memory.",
           "guaranteed-qos"},
          {"Deployment", "refused", "no pods", "no pods: replicaset refused-7c9d could not create them",
           "admission webhook \"validate.gpuadmit.io\" denied the request", "gpuadmit"},
          {"Job", "over-quota", "no pods", "no pods: job over-quota could not create them",
           "exceeded quota: gpu-quota", "gpu-quota"},
      }));
  CAPTURE(kind, name);
  const auto d = why(kind, name);
  CHECK(d.state == state);
  REQUIRE_FALSE(d.causes.empty());
  CHECK(d.causes[0].title == title);
  CHECK_THAT(d.causes[0].quote, Catch::Contains(quote));
  CHECK(d.causes[0].rule.starts_with(rule));
  CHECK_FALSE(d.causes[0].fix.empty());
}

TEST_CASE("an existing pod is not told about the quota it is already counted in", "[why]") {
  for (const auto& c : why("Pod", "eight-gpus").causes) CHECK_FALSE(c.rule.starts_with("gpu-quota"));
}

TEST_CASE("a rule's fixes are one cause, and the text and JSON carry every part", "[why]") {
  const auto d = why("Pod", "evicted");
  CHECK(d.causes[0].fix ==
        "raised container \"train\" cpu request from 2 to its limit 8\n"
        "raised container \"train\" memory request from 8Gi to its limit 32Gi");
  CHECK_THAT(d.causes[0].explanation, Catch::Contains("a Burstable pod is evicted first"));
  const std::string text = gpuadmit::admission::to_text(d);
  CHECK_THAT(text,
             Catch::StartsWith("pod/ml-team/evicted: Failed (Evicted)\n1. evicted\n   Kubernetes says: "));
  CHECK(
      gpuadmit::admission::to_json(d)["causes"][0]["rule"].get<std::string>().starts_with("guaranteed-qos"));
}

TEST_CASE(
    "an eviction is the cause even when its containers end with exit code 137, and a bare 137 is a "
    "SIGKILL, not an OOM",
    "[why]") {
  static const gpuadmit::policy::RuleSet rules;
  const auto [status, title, quote] = GENERATE(table<std::string, std::string, std::string>({
      // The kubelet's eviction leaves ContainerStatusUnknown, exit code 137.
      {"{phase: Failed, reason: Evicted, message: 'The node was low on resource: memory.', qosClass: "
       "Burstable, "
       "containerStatuses: [{name: train, state: {terminated: {reason: ContainerStatusUnknown, exitCode: "
       "137}}}]}",
       "evicted", "The node was low on resource: memory."},
      {"{phase: Running, containerStatuses: [{name: train, lastState: {terminated: {reason: Error, exitCode: "
       "137}}}]}",
       "killed (exit code 137, SIGKILL)", "container \"train\": terminated Error, exit code 137"},
  }));
  CAPTURE(status);
  json pod = gpuadmit::test::gpu_pod("1");
  pod["metadata"]["namespace"] = "ml-team";
  pod["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "1"}, {"memory", "1Gi"}};
  pod["status"] = gpuadmit::test::yaml(status);
  const auto d =
      gpuadmit::admission::diagnose({pod, {}, {}}, gpuadmit::policy::PolicySet::of(rules), nullptr);
  REQUIRE(d.ok());
  REQUIRE_FALSE(d->causes.empty());
  CHECK(d->causes[0].title == title);
  CHECK(d->causes[0].quote == quote);
}
