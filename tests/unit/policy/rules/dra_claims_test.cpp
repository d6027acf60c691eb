// dra-claims: a pod's DRA claims are judged against the cluster's device classes, slices, claims and
// templates (tests/fixtures/cluster/dra-cluster.yaml: 3 A100s + 7 MIG slices on one node, 8 H100s on
// another).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::dra_pod;
using gpuadmit::test::view_of;
using nlohmann::json;

// A pod of namespace ml-team whose one container asks for `gpus` of an extended resource (KEP-5004).
json extended_resource_pod(const std::string& resource, const std::string& gpus) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: main, image: nvcr.io/nvidia/pytorch:24.10-py3, resources: {limits: {)" +
                              resource + ": " + gpus + "}}}]\n");
}

std::string violations_of(const gpuadmit::admission::CheckResult& r, const std::string& rule) {
  std::string out;
  for (const auto& v : r.violations) {
    if (v.rule == rule) out += v.message + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("dra-claims denies what Kubernetes would leave Pending, naming what exists", "[dra-claims]") {
  auto [source, fragments] = GENERATE(table<std::string, std::vector<std::string>>({
      {"resourceClaimTemplateName: sixteen-gpus",
       {"asks for 16 devices of class \"gpu.nvidia.com\" on one node",
        "no node has more than 8 (dra-h100-0"}},
      {"resourceClaimTemplateName: h200-only",
       {"matches no device on the 2 nodes this pod can use",
        "productName is one of: NVIDIA A100-SXM4-80GB (3 devices on 1 node), NVIDIA H100 80GB HBM3 (8 on "
        "1)"}},
      {"resourceClaimTemplateName: bad-attr",
       {"no such key: gpuModel", "The devices have: architecture, brand, cudaComputeCapability"}},
      {"resourceClaimTemplateName: eight-mig-one-gpu", {"asks for 8 devices", "no node has more than 7"}},
  }));
  CAPTURE(source);
  const auto view = view_of("dra-cluster");
  const auto r = check(dra_pod(source), gpuadmit::test::policy_with(""), &view);
  CHECK_FALSE(r.allowed);
  const std::string text = violations_of(r, "dra-claims");
  for (const std::string& fragment : fragments) CHECK_THAT(text, Catch::Contains(fragment));
}

TEST_CASE(
    "dra-claims warns of a claim, template or device class not in view and never denies on "
    "absence alone",
    "[dra-claims]") {
  // kubectl apply -f creates a file's template a moment before its pod, and a controller may create one
  // after the pod (NVIDIA's DRA driver makes a ComputeDomain's channel template): Kubernetes accepts the
  // pod, which waits for it. The view may lag either way, so absence is never a certain Pending. A
  // DeviceClass too: a DRA driver's install creates it, and the pod is allocated once it exists.
  auto [source, fragments] = GENERATE(table<std::string, std::vector<std::string>>({
      {"resourceClaimName: shared-gpus",
       {"ResourceClaim \"shared-gpus\" is not in namespace ml-team", "did you mean \"shared-gpu\"?",
        "the pod waits in Pending until it exists"}},
      {"resourceClaimTemplateName: no-such-template",
       {"ResourceClaimTemplate \"no-such-template\" is not in namespace ml-team",
        "a controller may create it after the pod"}},
      {"resourceClaimTemplateName: typo-class",
       {"DeviceClass \"gpu.nvidia.cm\" does not exist", "did you mean \"gpu.nvidia.com\"",
        "device classes here: gpu.nvidia.com", "the pod waits in Pending until it exists"}},
  }));
  CAPTURE(source);
  const auto view = view_of("dra-cluster");
  const auto pod = dra_pod(source);
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK_THAT(gpuadmit::test::warnings_text(r), Catch::Contains("dra-claims"));
  const std::string text = gpuadmit::test::messages(pod, gpuadmit::test::policy_with(""), &view);
  for (const std::string& fragment : fragments) CHECK_THAT(text, Catch::Contains(fragment));
}

TEST_CASE("dra-claims allows the claims some node can serve, and counts their GPUs", "[dra-claims]") {
  auto [source, gpus] = GENERATE(table<std::string, int>({
      {"resourceClaimTemplateName: one-gpu", 1},
      {"resourceClaimTemplateName: cc9", 2},             // compute capability > 8.9: the H100s
      {"resourceClaimTemplateName: two-mig", 2},         // two MIG slices of one parent GPU
      {"resourceClaimTemplateName: h100-else-a100", 4},  // firstAvailable: no H200, so 4 H100s
      {"resourceClaimTemplateName: all-gpus", 8},        // All: the most on one node
      {"resourceClaimName: shared-gpu", 1},
  }));
  CAPTURE(source);
  const auto view = view_of("dra-cluster");
  const auto r = check(dra_pod(source), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(violations_of(r, "dra-claims").empty());
  // A GPU pod for the other rules: made Guaranteed, 8 cpu per GPU (the policy's figure, which each node with
  // the devices holds), so its GPU count is the claim's.
  const json& limits = r.fixed.at("spec").at("containers").at(0).at("resources").at("limits");
  CHECK(limits.at("cpu") == std::to_string(8 * gpus));
}

TEST_CASE("dra-claims warns when a workload's replicas share one ResourceClaim", "[dra-claims]") {
  const auto view = view_of("dra-cluster");
  const json deployment = gpuadmit::test::yaml(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ml-team}
spec:
  replicas: 2
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: main, image: busybox, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimName: shared-gpu}]
)");
  const auto r = check(deployment, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK_THAT(gpuadmit::test::all_text(r),
             Catch::Contains("ResourceClaim \"shared-gpu\" shared by 2 replicas"));
}

TEST_CASE("dra-claims says nothing without the DRA kinds in view", "[dra-claims]") {
  const auto view = view_of("gpu-cluster");
  const auto r = check(dra_pod("resourceClaimName: anything"), gpuadmit::test::policy_with(""), &view);
  CHECK(violations_of(r, "dra-claims").empty());
}

TEST_CASE("KEP-5004: plain nvidia.com/gpu requests count the DRA devices of the class that serves them",
          "[dra-claims][node-fit]") {
  auto [gpus, allowed] = GENERATE(table<std::string, bool>({{"2", true}, {"8", true}, {"9", false}}));
  CAPTURE(gpus);
  const auto view = view_of("dra-cluster");
  const json pod = extended_resource_pod("nvidia.com/gpu", gpus);
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed == allowed);
  if (!allowed) CHECK_THAT(violations_of(r, "node-fit"), Catch::Contains("1 node has 8 nvidia.com/gpu"));
}

TEST_CASE("KEP-5004: a GPU class's implicit deviceclass.resource.kubernetes.io name is a GPU request",
          "[dra-claims][node-fit]") {
  // Every DeviceClass is requestable as deviceclass.resource.kubernetes.io/<class>. A pod asking for a GPU
  // class that way is a GPU pod: made Guaranteed per GPU, never told to add nvidia.com/gpu nor given one.
  auto [gpus, allowed] = GENERATE(table<std::string, bool>({{"1", true}, {"8", true}, {"9", false}}));
  CAPTURE(gpus);
  const auto view = view_of("dra-cluster");
  const json pod = extended_resource_pod("deviceclass.resource.kubernetes.io/gpu.nvidia.com", gpus);
  for (const char* policy : {"default.yaml", "strict.yaml"}) {
    CAPTURE(policy);
    const auto rules = std::string(policy) == "default.yaml" ? gpuadmit::test::policy_with("")
                                                             : gpuadmit::test::policy_file("strict.yaml");
    const auto r = check(pod, rules, &view);
    CHECK(r.allowed == allowed);
    const json& limits = r.fixed.at("spec").at("containers").at(0).at("resources").at("limits");
    CHECK_FALSE(limits.contains("nvidia.com/gpu"));
    CHECK(gpuadmit::test::all_text(r).find("gpu-intent") == std::string::npos);
    if (allowed) CHECK(limits.at("cpu") == std::to_string(8 * std::stoi(gpus)));
    if (!allowed) {
      CHECK_THAT(violations_of(r, "node-fit"),
                 Catch::Contains("8 deviceclass.resource.kubernetes.io/gpu.nvidia.com"));
    }
  }
}

TEST_CASE("gpu-quota warns when the claims made from a workload's templates exceed the device class quota",
          "[dra-claims][gpu-quota]") {
  auto [replicas, warned] = GENERATE(table<int, bool>({{1, false}, {2, true}}));
  CAPTURE(replicas);
  const auto view = view_of("dra-cluster");  // ResourceQuota gpu-devices: 3 of 4 gpu.nvidia.com devices left
  const json job = gpuadmit::test::yaml(R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml-team}
spec:
  parallelism: )" + std::to_string(replicas) +
                                        R"(
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: main, image: busybox, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: cc9}]
)");
  const auto r = check(job, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  const bool said = gpuadmit::test::warnings_text(r).find(
                        "gpu-quota: ResourceQuota gpu-devices has 3 of 4 "
                        "gpu.nvidia.com.deviceclass.resource.k8s.io/devices left") != std::string::npos;
  CHECK(said == warned);
}

TEST_CASE("dra-claims only warns of a device class no node has, as a pool at zero may bring one",
          "[dra-claims]") {
  // No node of the cluster has a MIG slice: a node pool at zero with the DRA driver may bring some, as it may
  // bring a GPU resource no node offers (node-fit's noNodeOffers). MIG slices on a node the pod keeps away
  // from are a certain Pending, as node-fit judges a resource only other nodes have.
  // node-fit names the nodes the pod keeps away from.
  auto [strip_mig, extra_spec, allowed, node_fit] = GENERATE(table<bool, std::string, bool, std::string>({
      {true, "", true, ""},
      {false, "  nodeSelector: {kubernetes.io/hostname: dra-h100-0}\n", false,
       "1 node does not match nodeSelector kubernetes.io/hostname=dra-h100-0 (present: dra-a100-0, "
       "dra-h100-0).\nNo node could run it even when empty, so the scheduler would leave it Pending."},
  }));
  nlohmann::json list = gpuadmit::test::fixture("cluster/dra-cluster.yaml");
  if (strip_mig) {
    for (auto& item : list["items"]) {
      if (item["kind"] != "ResourceSlice") continue;
      auto& devices = item["spec"]["devices"];
      devices.erase(std::remove_if(devices.begin(), devices.end(),
                                   [](const json& d) { return d["attributes"]["type"]["string"] == "mig"; }),
                    devices.end());
    }
  }
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  REQUIRE(snapshot);
  const gpuadmit::policy::ClusterView view{
      std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
  const auto pod = dra_pod("resourceClaimTemplateName: two-mig", extra_spec);
  const auto r = check(pod, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed == allowed);
  CHECK(violations_of(r, "dra-claims").empty() == allowed);
  if (node_fit.empty()) {
    CHECK(violations_of(r, "node-fit").empty());
  } else {
    CHECK_THAT(violations_of(r, "node-fit"), Catch::Contains(node_fit));
  }
  CHECK_THAT(gpuadmit::test::messages(pod, gpuadmit::test::policy_with(""), &view),
             Catch::Contains("none of them has a device of class \"mig.nvidia.com\""));
}
