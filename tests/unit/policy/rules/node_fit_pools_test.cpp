// node-fit and Karpenter's NodePools (#46 item 6): a pod no running node can take, which a NodePool at zero
// (or below its limits) may launch a node for, is not a certain Pending: it gets noNodeOffers' action and
// names the pool. A pool that cannot launch one (taint, selector, limits, instance categories, GPU count)
// leaves the denial as it was.
#include <catch2/catch.hpp>

#include <string>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::yaml;
using nlohmann::json;

// tests/fixtures/cluster/gpu-cluster.yaml (at most 8 GPUs a node) with one NodePool more.
gpuadmit::policy::ClusterView with_pool(const std::string& pool_yaml) {
  json list = gpuadmit::test::fixture("cluster/gpu-cluster.yaml");
  if (!pool_yaml.empty()) list["items"].push_back(yaml(pool_yaml));
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

// Karpenter v1's shape (karpenter.sh/docs/concepts/nodepools), with GPU instances and the GPU taint.
std::string pool(const std::string& requirements, const std::string& extra = "",
                 const std::string& taints = "[{key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}]",
                 const std::string& labels = "{team: ml}") {
  return R"(apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu-p5}
spec:
  template:
    metadata: {labels: )" +
         labels + R"(}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: )" +
         taints + R"(
      requirements: )" +
         requirements + "\n" + extra;
}

json pod(const std::string& gpus, const std::string& extra_spec = "") {
  return yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: )" +
              gpus + "}}\n" + extra_spec);
}

const std::string kGpuFamilies = "[{key: karpenter.k8s.aws/instance-category, operator: In, values: [g, p]}]";

}  // namespace

TEST_CASE("node-fit leaves a pod to a Karpenter NodePool that may launch a node for it",
          "[node-fit][pools]") {
  // `why`: what the denial says of the pool ("" when none is named, or the pod is allowed).
  auto [name, pool_yaml, pod_json, allowed,
        why] = GENERATE_COPY(table<std::string, std::string, json, bool, std::string>({
      {"no NodePool: 16 GPUs on nodes of at most 8 are denied", "", pod("16"), false, ""},
      {"a GPU NodePool whose taint the pod tolerates may launch one", pool(kGpuFamilies), pod("16"), true,
       ""},
      {"a NodePool of CPU instance categories cannot",
       pool("[{key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m, r]}]"), pod("16"),
       false, "gpu-p5: its instance categories have no GPUs"},
      {"a NodePool whose taint the pod does not tolerate cannot",
       pool(kGpuFamilies, "", "[{key: reserved-for, value: team-a, effect: NoSchedule}]"), pod("16"), false,
       "gpu-p5: its taint reserved-for=team-a:NoSchedule is not tolerated"},
      {"a NodePool of fewer GPUs per instance than the pod's cannot",
       pool("[{key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: [\"1\", \"4\", \"8\"]}]"),
       pod("16"), false, "gpu-p5: its instances have at most 8 GPUs"},
      {"a NodePool whose GPU count is capped below the pod's by Lt cannot",
       pool("[{key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: [\"9\"]}]"), pod("16"), false,
       "gpu-p5: its instances have at most 8 GPUs"},
      {"a NodePool whose GPU count is open above the pod's may",
       pool("[{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: [\"8\"]}]"), pod("16"), true,
       ""},
      {"a NodePool whose GPUs are all in use up to its limit cannot",
       pool(kGpuFamilies, "  limits: {nvidia.com/gpu: 32}\nstatus: {resources: {nvidia.com/gpu: \"24\"}}"),
       pod("16"), false, "gpu-p5: its limit of 32 nvidia.com/gpu leaves 8"},
      {"a NodePool with room under its limit may",
       pool(kGpuFamilies, "  limits: {nvidia.com/gpu: 64}\nstatus: {resources: {nvidia.com/gpu: \"24\"}}"),
       pod("16"), true, ""},
      {"a selector on a label the NodePool does not define rules it out (its nodes will not carry it)",
       pool(kGpuFamilies), pod("16", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"),
       false, "gpu-p5: its nodes would not match the pod's selector or affinity"},
      {"a selector on the NodePool's own template label keeps it",
       pool(kGpuFamilies, "", "[]", "{nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"),
       pod("16", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}"), true, ""},
      {"a required affinity on a well-known label the NodePool leaves open keeps it", pool(kGpuFamilies),
       pod("16",
           R"(  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:
      [{matchExpressions: [{key: node.kubernetes.io/instance-type, operator: NotIn, values: [g5.xlarge]}]}]}}})"),
       true, ""},
      {"a required affinity that keeps off the NodePool by name rules it out", pool(kGpuFamilies),
       pod("16",
           R"(  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms:
      [{matchExpressions: [{key: karpenter.sh/nodepool, operator: NotIn, values: [gpu-p5]}]}]}}})"),
       false, "gpu-p5: its nodes would not match the pod's selector or affinity"},
  }));
  CAPTURE(name);
  const auto view = with_pool(pool_yaml);
  const auto r = check(pod_json, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed == allowed);
  const std::string text = gpuadmit::test::all_text(r);
  if (allowed) {
    CHECK_THAT(text,
               Catch::Contains("no node can run this pod now; Karpenter's NodePool gpu-p5 may launch one"));
  } else {
    REQUIRE(r.violations.size() == 1);
    const std::string& message = r.violations[0].message;
    CHECK_THAT(message, Catch::StartsWith("no node can run this pod: "));
    if (why.empty()) {
      CHECK_THAT(message, !Catch::Contains("NodePool"));
    } else {
      CHECK_THAT(message, Catch::Contains("\nNo Karpenter NodePool would launch one (" + why + ").\nFix: "));
    }
  }
}

TEST_CASE("node-fit's pool warning is a denial again under a policy whose noNodeOffers enforces",
          "[node-fit][pools]") {
  const auto view = with_pool(pool(kGpuFamilies));
  const auto r =
      check(pod("16"),
            gpuadmit::test::policy_with("    node-fit: {action: enforce, noNodeOffers: enforce}\n"), &view);
  REQUIRE_FALSE(r.allowed);
  REQUIRE(r.violations.size() == 1);
  CHECK_THAT(
      r.violations[0].message,
      Catch::Contains(
          "no node can run this pod right now: 2 nodes lack nvidia.com/gpu; 1 node is cordoned") &&
          Catch::Contains("Karpenter's NodePool gpu-p5 may launch one for it") &&
          Catch::Contains("instance types has cpu 8, memory 64Gi, nvidia.com/gpu 16, it waits forever") &&
          Catch::Contains("Fix: check that NodePool gpu-p5 offers such instances"));
}

TEST_CASE("a saved cluster's NodePool is read with its template, limits and use; a malformed one is an error",
          "[cluster][pools]") {
  const auto view = with_pool(
      pool(kGpuFamilies, "  limits: {nvidia.com/gpu: 64}\nstatus: {resources: {nvidia.com/gpu: \"24\"}}"));
  REQUIRE(view.snapshot->node_pools.size() == 1);
  const gpuadmit::k8s::NodePool& p = view.snapshot->node_pools[0];
  CHECK(p.name == "gpu-p5");
  CHECK(p.labels.at("team") == "ml");
  CHECK(p.requirements.size() == 1);
  CHECK(p.taints.size() == 1);
  CHECK(p.limits.at("nvidia.com/gpu").to_string() == "64");
  CHECK(p.used.at("nvidia.com/gpu").to_string() == "24");
  json bad = gpuadmit::test::fixture("cluster/gpu-cluster.yaml");
  bad["items"].push_back(
      yaml("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\nspec: {template: {spec: "
           "{taints: 3}}}\n"));
  const auto refused = gpuadmit::policy::snapshot_from_list(bad);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("NodePool \"x\"") && Catch::Contains("taints"));
}
