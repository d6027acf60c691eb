// The policy core reads an object given as nlohmann::json (the CLI, the tests) or as a JsonDocument value
// (the webhook). Both must reach the same decision, field for field: every fixture, both modes, with and
// without the cluster view, with the default policy and with one that has presets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"

using gpuadmit::k8s::JsonDocument;
using gpuadmit::policy::Decision;
using gpuadmit::policy::Finding;
using gpuadmit::policy::Mode;
using gpuadmit::policy::ObjectRef;
using nlohmann::json;

namespace {

json findings(const std::vector<Finding>& list) {
  json out = json::array();
  for (const Finding& f : list) out.push_back({f.rule, f.field, f.message, f.summary});
  return out;
}

// Everything a Decision says, as one value Catch can print when two differ.
json everything(const gpuadmit::Result<Decision>& result) {
  if (!result) return {{"error", result.error().message}};
  const Decision& d = *result;
  json fixes = json::array();
  for (const auto& f : d.fixes) fixes.push_back({f.rule, f.field, f.description});
  return {{"violations", findings(d.violations)},
          {"warnings", findings(d.warnings)},
          {"audits", findings(d.audits)},
          {"fixes", fixes},
          {"notices", d.notices},
          {"patch", d.patch},
          {"skipped", d.skipped_rules},
          {"evaluated", d.evaluated},
          {"reason", d.skipped_reason},
          {"controller", d.controller}};
}

gpuadmit::policy::RuleSet with_presets() {
  auto rules = gpuadmit::config::load_policy(R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
spec:
  presets:
    - name: everywhere
      selector: {gpu: true}
      env: [{name: NCCL_DEBUG, value: WARN}]
      tolerations: [{key: example.com/dedicated, operator: Exists, effect: NoSchedule}]
      volumes: [{name: datasets, persistentVolumeClaim: {claimName: datasets}}]
      volumeMounts: [{name: datasets, mountPath: /data}]
      annotations: {example.com/team: ml}
)",
                                             "presets.yaml");
  if (!rules) FAIL(rules.error().message);
  return *rules;
}

}  // namespace

TEST_CASE("a document and the same object as nlohmann::json get the same decision", "[document]") {
  auto snapshot = gpuadmit::policy::snapshot_from_list(gpuadmit::test::fixture("cluster/gpu-cluster.yaml"));
  REQUIRE(snapshot.ok());
  const gpuadmit::policy::ClusterView view{
      std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
  const gpuadmit::policy::RuleSet defaults = gpuadmit::config::default_rule_set();
  const gpuadmit::policy::RuleSet presets = with_presets();

  const std::string file = GENERATE(
      as<std::string>{}, "pods/cpu-pod-with-gpu-toleration.yaml", "pods/four-gpu-script-one-gpu.yaml",
      "pods/fractional-gpu.yaml", "pods/good-gpu-pod.yaml", "pods/gpu-pod-with-sidecar.yaml",
      "pods/gpu-request-without-limit.yaml", "pods/resnet50-no-gpu.yaml", "pods/vit-b-burstable.yaml",
      "pods/deployment-not-a-pod.yaml", "workloads/deployment.yaml", "workloads/job.yaml",
      "workloads/pytorchjob.yaml", "workloads/cronjob.yaml", "api-objects/training-pod-as-sent.json",
      "a Job's pod (the deploy example)");
  // The deploy example's pod has a controller (a Job), so its warnings are not repeated.
  const json object = file.starts_with("a Job's pod")
                          ? json::parse(gpuadmit::test::read_text(
                                std::string(GPUADMIT_SOURCE_DIR) +
                                "/deploy/examples/admission-review-gpu-pod.json"))["request"]["object"]
                          : gpuadmit::test::fixture(file);
  const std::string text = object.dump();
  auto document = JsonDocument::parse(text, 128);
  REQUIRE(document.ok());

  std::size_t compared = 0;
  for (const auto* rules : {&defaults, &presets}) {
    for (const Mode mode : {Mode::kMutate, Mode::kValidate}) {
      for (const gpuadmit::policy::ClusterView* cluster :
           {static_cast<const gpuadmit::policy::ClusterView*>(nullptr), &view}) {
        const auto from_json = gpuadmit::policy::evaluate({object, "ml-team", mode, cluster}, *rules);
        const auto from_document =
            gpuadmit::policy::evaluate({ObjectRef(document->root()), "ml-team", mode, cluster}, *rules);
        INFO(file << (mode == Mode::kMutate ? " mutate" : " validate") << (cluster ? " with" : " without")
                  << " the cluster view, " << (rules == &presets ? "presets" : "default policy"));
        CHECK(everything(from_document) == everything(from_json));

        ++compared;
      }
    }
  }
  CHECK(compared == 8);
}

TEST_CASE("a document keeps members sorted, the last of a repeated key, and decoded escapes", "[document]") {
  const std::string text = R"({"b":1,"a":{"z":true,"y":null},"b":"two","c":"tab\there","d":[1,-2,2.5,"x"]})";
  auto document = JsonDocument::parse(text, 8);
  REQUIRE(document.ok());
  const auto& root = document->root();
  std::vector<std::string> keys;
  for (const auto& member : root.members()) keys.emplace_back(member.key);
  CHECK(keys == std::vector<std::string>{"a", "b", "c", "d"});
  REQUIRE(root.find("b") != nullptr);
  CHECK(root.find("b")->string() == "two");
  CHECK(root.find("c")->string() == "tab\there");
  CHECK(root.find("missing") == nullptr);
  CHECK(root.find("b")->find("anything") == nullptr);  // not an object: no member, and no crash
  CHECK(root.find("a")->members()[0].key == "y");
  const auto& list = *root.find("d");
  REQUIRE(list.size() == 4);
  CHECK(list[1].integer() == -2);
  CHECK(list[0].unsigned_integer() == 1);
  CHECK(list[2].floating() == 2.5);
  CHECK(to_json(root) == json::parse(text));
  // A string without escapes is a view into the text: nothing copied.
  CHECK(list[3].string().data() >= text.data());
  CHECK(list[3].string().data() < text.data() + text.size());
}
