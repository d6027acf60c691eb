// node-fit: a pod no node can run (GPUs, cpu and memory over what any node holds, the scheduler's
// "Insufficient memory"; selectors, taints, cordons) is denied with a scheduler-like breakdown.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::Action;
using gpuadmit::policy::ClusterView;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::view_of;
using nlohmann::json;

json pod_sized(const std::string& cpu, const std::string& memory) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: ")" +
                              cpu + R"(", memory: )" + memory + R"(, nvidia.com/gpu: 1}}
)");
}

// A node of a pool: identical to its pool mates but for the name and hostname label.
gpuadmit::k8s::Node pool_node(const std::string& name, const std::string& zone, std::int64_t gpus) {
  using gpuadmit::k8s::Quantity;
  gpuadmit::k8s::Node n;
  n.name = name;
  n.labels = {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", zone}};
  n.allocatable = {{"cpu", Quantity::from_units(64)},
                   {"memory", *Quantity::parse("512Gi")},
                   {"pods", Quantity::from_units(110)},
                   {"nvidia.com/gpu", Quantity::from_units(gpus)}};
  return n;
}

ClusterView pools_view() {
  std::vector<gpuadmit::k8s::Node> nodes = {pool_node("a-0", "z1", 4), pool_node("a-1", "z1", 4),
                                            pool_node("a-2", "z1", 4), pool_node("b-0", "z1", 2),
                                            pool_node("b-1", "z1", 2), pool_node("c-0", "z2", 4)};
  return ClusterView{std::make_shared<const gpuadmit::policy::ClusterSnapshot>(
                         gpuadmit::policy::make_snapshot(std::move(nodes), {}, {}, {})),
                     false, 0};
}

}  // namespace

TEST_CASE("node-fit denies cpu or memory beyond every GPU node's allocatable, with the numbers",
          "[node-fit]") {
  auto [cpu, memory, fragment] = GENERATE(table<std::string, std::string, std::string>({
      // Capacity as people read it, rounded down: 27107535Ki is 25.85Gi.
      {"4", "32Gi", "2 nodes have 25.85Gi memory, the pod asks for 32Gi"},
      {"8", "16Gi", "2 nodes have 7910m cpu, the pod asks for 8"},
      // Every resource short is named, as the scheduler names each: none hides another.
      {"8", "32Gi", "2 nodes have 7910m cpu and 25.85Gi memory, the pod asks for 8 cpu and 32Gi memory"},
  }));
  CAPTURE(cpu, memory);
  const auto view = view_of("gke-t4");
  const auto r = check(pod_sized(cpu, memory), gpuadmit::test::policy_with(""), &view);
  REQUIRE_FALSE(r.allowed);
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].rule == "node-fit");
  CHECK_THAT(r.violations[0].message,
             Catch::Contains(fragment) && Catch::Contains("1 node lacks nvidia.com/gpu"));
}

TEST_CASE("node-fit lets through cpu and memory that one GPU node holds", "[node-fit]") {
  const auto view = view_of("gke-t4");
  const auto r = check(pod_sized("7", "24Gi"), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
}

TEST_CASE("node-fit denies a pod no node can run, with a scheduler-like breakdown", "[cluster][node-fit]") {
  const auto r = check(gpu_pod("8"), gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].rule == "node-fit");
  CHECK_THAT(r.violations[0].message,
             Catch::StartsWith(
                 "no node can run this pod: 2 nodes lack nvidia.com/gpu; 1 node is cordoned; 1 node has 4 "
                 "nvidia.com/gpu, the pod asks for 8; 1 node has the taint dedicated=inference:NoSchedule, "
                 "which the pod does not tolerate; 1 node has the taint node.kubernetes.io/unreachable:"
                 "NoExecute, which the pod does not tolerate.\n"
                 "The pod asks for cpu 8, memory 64Gi, nvidia.com/gpu 8"));
}

TEST_CASE("node-fit lets a pod that fits one node through", "[cluster][node-fit]") {
  const auto r = check(gpu_pod("4"), gpu_cluster_view());
  CHECK(r.allowed);
}

TEST_CASE("node-fit warns of a selector value no node has, naming the values present: a pool at zero may",
          "[cluster][node-fit]") {
  // Other pools' nodes say nothing of an autoscaled B200 pool at zero nodes: unsure, so noNodeOffers'
  // action (warn by default, enforce denies), as gpu-tolerations already treats it as scale-from-zero.
  auto [no_node_offers, denied] =
      GENERATE(table<Action, bool>({{Action::kWarn, false}, {Action::kEnforce, true}}));
  json object = gpu_pod("1");
  object["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-B200"}};
  RuleSet rules;
  rules.node_fit.no_node_offers = no_node_offers;
  const ClusterView view = gpu_cluster_view();
  const auto r = check(object, view, rules);
  CHECK(r.allowed == !denied);
  CHECK_THAT(
      gpuadmit::test::messages(object, rules, &view),
      Catch::Contains("no node matches nodeSelector nvidia.com/gpu.product=NVIDIA-B200 "
                      "(present: NVIDIA-A100-SXM4-40GB, "
                      "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb, NVIDIA-H100-80GB-HBM3, Tesla-T4) right now") &&
          Catch::Contains("it scales up for this pod"));
}

TEST_CASE("nodes that differ only in name and hostname form one group, counted whole by node-fit",
          "[cluster][node-fit]") {
  const ClusterView view = pools_view();
  const auto& groups = view.snapshot->groups_by_resource.at("nvidia.com/gpu");
  REQUIRE(groups.size() == 3);  // a-* (3), b-* (2), c-0 (another zone)
  CHECK(groups[0].count == 3);
  CHECK(groups[1].count == 2);
  CHECK(groups[2].count == 1);
  CHECK(view.snapshot->node_groups.size() == 3);
  const auto r = check(gpu_pod("8"), view);
  REQUIRE_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message,
             Catch::StartsWith(
                 "no node can run this pod: 4 nodes have 4 nvidia.com/gpu, the pod asks for 8; 2 nodes "
                 "have 2 nvidia.com/gpu, the pod asks for 8.\n"));
}

TEST_CASE("a pod that picks nodes by hostname is judged node by node, not by group", "[cluster][node-fit]") {
  // hostname, GPUs asked, allowed, a message fragment when denied
  auto [host, asks, allowed, fragment] = GENERATE(table<std::string, std::string, bool, std::string>({
      {"a-1", "4", true, ""},
      {"b-1", "4", false, "1 node has 2 nvidia.com/gpu, the pod asks for 4"},
      {"b-1", "2", true, ""},
  }));
  INFO(host << " " << asks);
  json object = gpu_pod(asks);
  object["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", host}};
  const auto r = check(object, pools_view());
  CHECK(r.allowed == allowed);
  if (!allowed) {
    CHECK_THAT(r.violations.at(0).message, Catch::Contains(fragment));
    CHECK_THAT(r.violations.at(0).message,
               Catch::Contains(
                   "5 nodes do not match nodeSelector kubernetes.io/hostname=b-1 (present: a-0, a-1, a-2, "
                   "b-0, b-1, c-0)"));
  }
}

TEST_CASE("node-fit only warns when no node offers the GPU resource at all (a pool scaled to zero)",
          "[cluster][node-fit]") {
  std::string body = gpuadmit::test::gpu_pod_yaml("1");
  body.replace(body.find("nvidia.com/gpu"), 14, "habana.ai/gaudi");
  const json object = gpuadmit::test::yaml(body);
  auto [no_node_offers, denied] =
      GENERATE(table<Action, bool>({{Action::kWarn, false}, {Action::kEnforce, true}}));
  RuleSet rules;
  rules.node_fit.no_node_offers = no_node_offers;
  const auto r = check(object, gpu_cluster_view(), rules);
  CHECK(r.allowed == !denied);
  CHECK_THAT(all_text(r), Catch::Contains("no node offers habana.ai/gaudi"));
}

TEST_CASE("node-fit leaves HAMi's and Volcano's GPU shares to their schedulers",
          "[cluster][node-fit][gpu-share]") {
  // Project-HAMi/HAMi examples/nvidia/default_use.yaml: nvidia.com/gpumem and gpucores are in no node's
  // allocatable; HAMi's scheduler places them and has kube-scheduler ignore them.
  json object = gpu_pod("1");
  object["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpumem"] = 3000;
  object["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpucores"] = 30;
  const auto r = check(object, gpu_cluster_view());
  CHECK(r.allowed);
  CHECK(all_text(r).find("node-fit") == std::string::npos);
}

TEST_CASE("node-fit weighs the GPU shares nodes advertise and leaves the rest to their schedulers",
          "[cluster][node-fit][gpu-share]") {
  // AliyunContainerService/gpushare-scheduler-extender samples/2.yaml: aliyun.com/gpu-mem (GiB of GPU memory)
  // is in the allocatable of the nodes its device plugin runs on, and kube-scheduler counts it ("Insufficient
  // aliyun.com/gpu-mem"); a pod asking for it alone waits Pending on a cluster without them, and asks for a
  // GPU all the same. Project-HAMi/HAMi examples/metax/sgpu/default_use.yaml: metax-tech.com/sgpu counts
  // shared GPUs, which nodes advertise; vcore and vmemory qualify them and are in no node's allocatable.
  auto [limits, offers, unsaid] = GENERATE(table<std::string, std::string, std::string>({
      {"aliyun.com/gpu-mem: 2", "no node offers aliyun.com/gpu-mem", "requests no GPU"},
      {"metax-tech.com/sgpu: 1, metax-tech.com/vcore: 60, metax-tech.com/vmemory: 4",
       "no node offers metax-tech.com/sgpu", "vcore"},
  }));
  CAPTURE(limits);
  const json object = gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  containers: [{name: a, image: ubuntu:22.04, resources: {limits: {)" +
                                           limits + "}}}]\n");
  const auto r = check(object, gpu_cluster_view());
  CHECK(r.allowed);
  CHECK_THAT(all_text(r), Catch::Contains(offers));
  CHECK_THAT(all_text(r), !Catch::Contains(unsaid));
}
