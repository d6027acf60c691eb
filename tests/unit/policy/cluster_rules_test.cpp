#include <catch2/catch.hpp>

#include <algorithm>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Action;
using gpuadmit::policy::ClusterView;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using nlohmann::json;

TEST_CASE("the snapshot indexes nodes by GPU resource and ignores cordoned nodes for the maximum",
          "[cluster]") {
  const ClusterView view = gpu_cluster_view();
  const auto& s = *view.snapshot;
  CHECK(s.nodes.size() == 6);
  CHECK(s.nodes_by_resource.at("nvidia.com/gpu").size() == 4);
  CHECK(s.max_allocatable.at("nvidia.com/gpu").to_string() == "4");
  CHECK(s.default_storage_class()->name == "fast-ssd");
  CHECK(s.claim("ml-team", "llama-checkpoints") != nullptr);
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

TEST_CASE("node-fit names the selector value nobody has and the values present", "[cluster][node-fit]") {
  json object = gpu_pod("1");
  object["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-B200"}};
  const auto r = check(object, gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message,
             Catch::Contains("1 node does not match nodeSelector nvidia.com/gpu.product=NVIDIA-B200 "
                             "(present: NVIDIA-A100-SXM4-40GB, "
                             "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb, NVIDIA-H100-80GB-HBM3, Tesla-T4)"));
}

TEST_CASE("with a cluster view, gpu-tolerations tolerates the GPU nodes' exact taints, not reservations",
          "[cluster][tolerations]") {
  // t4-0's dedicated=inference reserves that node; node.kubernetes.io/* taints are Kubernetes' own.
  const auto r = check(gpu_pod("1"), gpu_cluster_view());
  const json expected = json::parse(R"([
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}])");
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}

TEST_CASE("a custom taint every GPU node carries is tolerated", "[cluster][tolerations]") {
  json list = gpuadmit::test::fixture("cluster/gpu-cluster.yaml");
  for (json& item : list["items"]) {
    if (item["kind"] == "Node" && item["status"]["allocatable"].contains("nvidia.com/gpu")) {
      item["spec"]["taints"].push_back(
          {{"key", "example.com/gpu-pool"}, {"value", "ml"}, {"effect", "NoSchedule"}});
    }
  }
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  REQUIRE(snapshot.ok());
  const ClusterView view{std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)),
                         false, 0};
  const auto r = check(gpu_pod("1"), view);
  CHECK(
      r.fixed["spec"]["tolerations"][0] ==
      json::parse(
          R"({"key": "example.com/gpu-pool", "operator": "Equal", "value": "ml", "effect": "NoSchedule"})"));
}

TEST_CASE("gpu-tolerations weighs a taint by the usable nodes that carry it, every node of a pool counted",
          "[cluster][tolerations]") {
  struct NodeSpec {
    std::vector<std::string> taints;  // key=value, all NoSchedule
    bool cordoned = false;
    bool ready = true;
  };
  struct Case {
    const char* what;
    std::vector<NodeSpec> nodes;
    std::vector<std::string> tolerated;  // key=value
  };
  const std::vector<Case> cases{
      {"a taint on three identical nodes of four reserves them, and stays untolerated",
       {{{"gpu=present", "pool=ml"}},
        {{"gpu=present", "pool=ml"}},
        {{"gpu=present", "pool=ml"}},
        {{"gpu=present"}}},
       {"gpu=present"}},
      {"a taint on every node of an identical pool is tolerated",
       {{{"pool=ml"}}, {{"pool=ml"}}, {{"pool=ml"}}},
       {"pool=ml"}},
      {"a cordoned node without the taint does not count",
       {{{"pool=ml"}}, {{"pool=ml"}}, {{}, true}},
       {"pool=ml"}},
      {"a node that is not ready does not count",
       {{{"pool=ml"}}, {{"pool=ml"}}, {{}, false, false}},
       {"pool=ml"}},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
      for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        json taints = json::array();
        for (const std::string& t : c.nodes[i].taints) {
          taints.push_back({{"key", t.substr(0, t.find('='))},
                            {"value", t.substr(t.find('=') + 1)},
                            {"effect", "NoSchedule"}});
        }
        list["items"].push_back(
            {{"apiVersion", "v1"},
             {"kind", "Node"},
             {"metadata",
              {{"name", "gpu-" + std::to_string(i)},
               {"labels", {{"kubernetes.io/hostname", "gpu-" + std::to_string(i)}}}}},
             {"spec", {{"taints", taints}, {"unschedulable", c.nodes[i].cordoned}}},
             {"status",
              {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}}},
               {"conditions", {{{"type", "Ready"}, {"status", c.nodes[i].ready ? "True" : "False"}}}}}}});
      }
      auto snapshot = gpuadmit::policy::snapshot_from_list(list);
      REQUIRE(snapshot.ok());
      const ClusterView view{std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)),
                             false, 0};
      const auto r = check(gpu_pod("1"), view);
      std::vector<std::string> tolerated;
      for (const json& t : r.fixed["spec"].value("tolerations", json::array())) {
        tolerated.push_back(t["key"].get<std::string>() + "=" + t["value"].get<std::string>());
      }
      CHECK(tolerated == c.tolerated);
    }
  }
}

TEST_CASE("gpu-quota warns with the namespace's headroom", "[cluster][quota]") {
  const auto r = check(gpu_pod("4"), gpu_cluster_view());
  CHECK_THAT(all_text(r),
             Catch::Contains(
                 "ResourceQuota gpu-quota has 2 of 8 requests.nvidia.com/gpu left; this pod asks for 4"));
}

TEST_CASE("a stale cluster view turns cluster-aware denials into warnings that say how old it is",
          "[cluster][stale]") {
  const auto r = check(gpu_pod("8"), gpu_cluster_view(true));
  CHECK(r.allowed);
  CHECK_THAT(all_text(r), Catch::Contains("node-fit: (cluster view 420s old) no node can run this pod"));
  RuleSet strict;
  strict.on_stale_cluster = gpuadmit::policy::OnStale::kEnforce;
  CHECK_FALSE(check(gpu_pod("8"), gpu_cluster_view(true), strict).allowed);
}

TEST_CASE("without a cluster view the cluster-aware rules are skipped and listed", "[cluster]") {
  auto r = gpuadmit::admission::check_object(gpu_pod("8"), RuleSet{}, "ml-team", nullptr);
  REQUIRE(r.ok());
  CHECK(r->allowed);
  CHECK(r->skipped_rules == std::vector<std::string>{"gpu-type", "cuda-driver", "node-fit", "gpu-quota"});
}

TEST_CASE("checkpoint-pvc sizes a checkpoint claim from the model and checks its class", "[cluster][pvc]") {
  auto [claim_yaml, fragment] = GENERATE(table<std::string, std::string>({
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'}}\n"
       "spec: {resources: {requests: {storage: 10Gi}}}",
       "requests 10Gi, less than the 50Gi it needs (the policy minimum 50Gi)"},
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'},\n"
       "  annotations: {gpuadmit.io/model-parameters: 70B, gpuadmit.io/model-precision: bf16}}\n"
       "spec: {resources: {requests: {storage: 200Gi}}}",
       "less than the 470Gi it needs (70B parameters × 2 bytes × 3 checkpoints kept × 120% headroom)"},
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'}}\n"
       "spec: {storageClassName: slow-hdd, resources: {requests: {storage: 100Gi}}}",
       "uses storage class \"slow-hdd\", which does not exist"},
  }));
  const json claim = gpuadmit::test::yaml("apiVersion: v1\nkind: PersistentVolumeClaim\n" + claim_yaml);
  const auto r = check(claim, gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message, Catch::Contains(fragment));
}

TEST_CASE("an unmarked or big enough claim is allowed", "[cluster][pvc]") {
  const json plain = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {resources: {requests: "
      "{storage: 1Gi}}}");
  CHECK(check(plain, gpu_cluster_view()).allowed);
  const json big = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, labels: {gpuadmit.io/checkpoint: "
      "'true'}}\n"
      "spec: {resources: {requests: {storage: 1Ti}}}");
  CHECK(check(big, gpu_cluster_view()).allowed);
}

TEST_CASE("a pod that mounts a claim that does not exist gets a warning", "[cluster][pvc]") {
  json object = gpu_pod("1");
  object["spec"]["volumes"] =
      json::parse(R"([{"name":"ckpt","persistentVolumeClaim":{"claimName":"missing"}}])");
  CHECK_THAT(all_text(check(object, gpu_cluster_view())),
             Catch::Contains("claim \"missing\" does not exist (yet)"));
}

TEST_CASE("cluster-aware mutation is idempotent", "[cluster][idempotence]") {
  json object = gpu_pod("1");
  object["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "a100,h100"}};
  object["spec"]["containers"][0]["image"] = "nvidia/cuda:12.2.0-runtime-ubuntu22.04";
  RuleSet rules;
  rules.cuda_driver.action = gpuadmit::policy::Action::kEnforce;
  const ClusterView view = gpu_cluster_view();
  auto once = gpuadmit::policy::evaluate({object, "ml-team", gpuadmit::policy::Mode::kMutate, &view}, rules);
  REQUIRE(once.ok());
  REQUIRE_FALSE(once->patch.empty());
  const json fixed = object.patch(once->patch);
  auto twice = gpuadmit::policy::evaluate({fixed, "ml-team", gpuadmit::policy::Mode::kMutate, &view}, rules);
  REQUIRE(twice.ok());
  CHECK(twice->patch.empty());
}

namespace {

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
