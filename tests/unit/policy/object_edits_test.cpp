// ObjectEdits keeps only the parts a fix touched; its patch must be the one a diff of the whole edited
// object gives (the patches the webhook sent before, which the goldens pin), operation for operation.
#include <functional>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../../../src/policy/json_diff.hpp"
#include "../../../src/policy/object_edits.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::container_part;
using gpuadmit::policy::metadata_part;
using gpuadmit::policy::ObjectEdits;
using gpuadmit::policy::spec_part;
using nlohmann::json;
using Scope = gpuadmit::k8s::PodPart::Scope;

gpuadmit::k8s::PodPart container(const char* array, std::size_t index, std::string_view member) {
  return {Scope::kContainer, array, index, member};
}

// The whole-object diff the webhook used to compute: the spec, then metadata member by member.
json whole_diff(const json& source, const json& target) {
  json patch = gpuadmit::policy::json_diff(source.at("spec"), target.at("spec"), "/spec");
  if (!source.contains("metadata") || !source["metadata"].is_object()) {
    if (target.contains("metadata"))
      patch.push_back({{"op", "add"}, {"path", "/metadata"}, {"value", target["metadata"]}});
    return patch;
  }
  for (const auto& [key, value] : target["metadata"].items()) {
    const std::string path = "/metadata/" + key;
    if (source["metadata"].contains(key)) {
      for (json& op : gpuadmit::policy::json_diff(source["metadata"][key], value, path)) patch.push_back(op);
    } else {
      patch.push_back({{"op", "add"}, {"path", path}, {"value", value}});
    }
  }
  return patch;
}

const char* const kPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {a: "1"}
spec:
  initContainers:
    - {name: fetch}
    - {name: proxy, restartPolicy: Always, resources: {limits: {cpu: "1"}}}
  containers:
    - name: train
      env: [{name: A, value: "1"}]
      resources: {requests: {cpu: "4"}, limits: {nvidia.com/gpu: 1}}
    - {name: logs}
  tolerations: [{key: k, operator: Exists}]
)";

using Edit = std::function<void(ObjectEdits&)>;

}  // namespace

TEST_CASE("the patch of edited parts is the diff of the whole edited object, in the same order", "[edits]") {
  auto [source_yaml, what, edit] = GENERATE(table<const char*, const char*, Edit>({
      {kPod, "nothing edited", [](ObjectEdits&) {}},
      {kPod, "a container's resources",
       [](ObjectEdits& e) { e.edit(container("containers", 0, "resources"))["limits"]["cpu"] = "4"; }},
      {kPod, "existing members before added ones, in a container and in the spec",
       [](ObjectEdits& e) {
         e.edit(container("containers", 0, "volumeMounts"))
             .push_back({{"name", "dshm"}, {"mountPath", "/dev/shm"}});
         e.edit(spec_part("volumes")).push_back({{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}});
         e.edit(container("containers", 0, "env")).push_back({{"name", "B"}});
         e.edit(spec_part("affinity"))["nodeAffinity"] = json::object();
         e.edit(spec_part("tolerations")).push_back({{"key", "nvidia.com/gpu"}, {"operator", "Exists"}});
         e.edit(container("containers", 0, "resources"))["requests"]["cpu"] = "8";
       }},
      {kPod, "containers by index, init containers after app containers",
       [](ObjectEdits& e) {
         e.edit(container("initContainers", 1, "resources"))["requests"]["cpu"] = "1";
         e.edit(container("containers", 1, "resources"))["limits"]["cpu"] = "1";
         e.edit(container("initContainers", 0, "resources"))["limits"]["cpu"] = "1";
         e.edit(container("containers", 0, "resources"))["limits"]["cpu"] = "4";
       }},
      {kPod, "annotations and the spec",
       [](ObjectEdits& e) {
         e.edit(metadata_part("annotations"))["gpuadmit.io/mutated-by"] = "shm-size";
         e.edit(spec_part("nodeSelector"))["pool"] = "a100";
       }},
      {kPod, "labels added, annotations changed",
       [](ObjectEdits& e) {
         e.edit(metadata_part("labels"))["team"] = "ml";
         e.edit(metadata_part("annotations"))["a"] = "2";
       }},
      {kPod, "a part asked for and left alone", [](ObjectEdits& e) { (void)e.edit(spec_part("affinity")); }},
      {kPod, "a part edited back to what it was",
       [](ObjectEdits& e) {
         json& limits = e.edit(container("containers", 0, "resources"))["limits"];
         limits["cpu"] = "4";
         limits.erase("cpu");
       }},
      {kPod, "the same part edited twice",
       [](ObjectEdits& e) {
         e.edit(spec_part("tolerations")).push_back({{"key", "a"}});
         e.edit(spec_part("tolerations")).push_back({{"key", "b"}});
       }},
      {kPod, "items appended to a list the object has",
       [](ObjectEdits& e) {
         e.append(spec_part("tolerations")) = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}};
         e.append(spec_part("tolerations")) = {{"key", "b"}};
         e.append(container("containers", 0, "resources"))["x"] = 1;  // not a list in the object: edited whole
       }},
      {kPod, "items appended to lists the object lacks, with other parts",
       [](ObjectEdits& e) {
         e.append(container("containers", 0, "volumeMounts"))["name"] = "dshm";
         e.append(spec_part("volumes"))["name"] = "dshm";
         e.edit(container("containers", 0, "resources"))["requests"]["cpu"] = "8";
       }},
      {kPod, "appended to, then edited whole",
       [](ObjectEdits& e) {
         e.append(spec_part("tolerations")) = {{"key", "b"}};
         e.edit(spec_part("tolerations"))[0]["operator"] = "Equal";
         e.append(spec_part("tolerations")) = {{"key", "c"}};
       }},
      {kPod, "edited whole, then appended to",
       [](ObjectEdits& e) {
         e.edit(spec_part("tolerations")).erase(0);
         e.append(spec_part("tolerations")) = {{"key", "c"}};
       }},
      {"{kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, volumeMounts: [{name: a, mountPath: /a}]}], "
       "volumes: null, tolerations: []}}",
       "appended to a null member, an empty list and a container's list",
       [](ObjectEdits& e) {
         e.append(spec_part("volumes"))["name"] = "v";
         e.append(spec_part("tolerations"))["key"] = "k";
         e.append(container("containers", 0, "volumeMounts"))["name"] = "dshm";
       }},
      {"{kind: Pod, spec: {containers: [{name: c}]}}", "no metadata at all",
       [](ObjectEdits& e) {
         e.edit(metadata_part("annotations"))["gpuadmit.io/mutated-by"] = "gpu-tolerations";
         e.edit(spec_part("tolerations")) = json::array({{{"key", "k"}}});
       }},
      {"{kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, resources: null}]}}",
       "a member that is null",
       [](ObjectEdits& e) { e.edit(container("containers", 0, "resources"))["limits"]["cpu"] = "1"; }},
  }));
  CAPTURE(what);
  const json source = gpuadmit::test::yaml(source_yaml);
  const auto document = gpuadmit::test::document_of(source);
  ObjectEdits edits{document.root()};
  edit(edits);
  const json patch = edits.patch();
  const json applied = edits.applied();
  CHECK(patch == whole_diff(source, applied));
  CHECK(source.patch(patch) == applied);
}

TEST_CASE("an edited part reads back as edited; an untouched one as the object has it", "[edits]") {
  const json source = gpuadmit::test::yaml(kPod);
  const auto document = gpuadmit::test::document_of(source);
  ObjectEdits edits{document.root()};
  CHECK(edits.current(spec_part("tolerations")) == source["spec"]["tolerations"]);
  CHECK(edits.current(spec_part("volumes")).is_null());
  CHECK_FALSE(edits.stale());
  edits.edit(spec_part("volumes")).push_back({{"name", "v"}});
  CHECK(edits.stale());
  CHECK(edits.current(spec_part("volumes")) == json::array({{{"name", "v"}}}));
  CHECK(edits.current(metadata_part("annotations")) == json{{"a", "1"}});
}

TEST_CASE("items appended to a list read back at the list's end, with errors at their index", "[edits]") {
  const json source = gpuadmit::test::yaml(kPod);
  auto pod = gpuadmit::k8s::parse_pod(source);
  REQUIRE(pod.ok());
  const auto document = gpuadmit::test::document_of(source);
  ObjectEdits edits{document.root()};
  edits.append(spec_part("tolerations")) = {{"key", "a"}, {"operator", "Exists"}};
  CHECK(edits.stale());
  CHECK(edits.current(spec_part("tolerations")).size() == 2);
  REQUIRE(edits.refresh(*pod).ok());
  CHECK_FALSE(edits.stale());
  REQUIRE(pod->tolerations.size() == 2);
  CHECK(pod->tolerations[1].key == "a");
  // A second append reads only the new item, and a bad one is named by its index in the whole list.
  edits.append(spec_part("tolerations")) = {{"key", "b"}};
  REQUIRE(edits.refresh(*pod).ok());
  REQUIRE(pod->tolerations.size() == 3);
  CHECK(pod->tolerations[2].key == "b");
  edits.append(spec_part("tolerations")) = {{"key", 7}};
  const auto refreshed = edits.refresh(*pod);
  REQUIRE_FALSE(refreshed.ok());
  CHECK(refreshed.error().message == "spec.tolerations[3].key: expected a string, got a number");
  const auto whole = gpuadmit::k8s::parse_pod(edits.applied());
  REQUIRE_FALSE(whole.ok());
  CHECK(whole.error().message == refreshed.error().message);
}

TEST_CASE("refreshing re-reads only what was edited, and reports a part the pod cannot hold", "[edits]") {
  const json source = gpuadmit::test::yaml(kPod);
  auto pod = gpuadmit::k8s::parse_pod(source);
  REQUIRE(pod.ok());
  const auto document = gpuadmit::test::document_of(source);
  ObjectEdits edits{document.root()};
  edits.edit(spec_part("tolerations")).push_back({{"key", "nvidia.com/gpu"}, {"operator", "Exists"}});
  REQUIRE(edits.refresh(*pod).ok());
  CHECK_FALSE(edits.stale());
  CHECK(pod->tolerations.size() == 2);
  edits.edit(spec_part("nodeSelector")) = "gpu";
  const auto refreshed = edits.refresh(*pod);
  REQUIRE_FALSE(refreshed.ok());
  CHECK(refreshed.error().message == "spec.nodeSelector: expected an object, got a string");
}
