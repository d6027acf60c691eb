// gpu-tolerations: tolerate the taints of the nodes the pod can use, once gpuadmit or the pod itself has
// narrowed them to a pool; with no view, or no GPU node in it, the policy's list, unless the pod's own
// tolerations cover it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::ClusterView;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::pod_with_spec;
using gpuadmit::test::view_of;
using nlohmann::json;

json toleration_pod(const std::string& gpus, const std::string& metadata_extra = "",
                    const std::string& spec_extra = "") {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml-team
)" + metadata_extra + R"(
spec:
)" + spec_extra + R"(
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: )" +
                              gpus + "}}\n");
}

const json kGpuTaint = {
    {"key", "nvidia.com/gpu"}, {"operator", "Equal"}, {"value", "present"}, {"effect", "NoSchedule"}};
const json kA100Taint = {
    {"key", "gpu-type"}, {"operator", "Equal"}, {"value", "a100"}, {"effect", "NoSchedule"}};

}  // namespace

TEST_CASE("gpu-tolerations tolerates the taints of the pool the pod is narrowed to", "[gpu-tolerations]") {
  auto [about, object, expected] = GENERATE_COPY(table<std::string, json, json>({
      // gpu-type steers the pod to the A100 pool; without that pool's own taint node-fit denied the pod
      // for the taint of the pool gpuadmit sent it to.
      {"steered by gpu-type", toleration_pod("1", "  annotations: {gpuadmit.io/gpu-type: a100}"),
       json{kA100Taint, kGpuTaint}},
      {"the pod's own nodeSelector",
       toleration_pod("1", "", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}"),
       json{kA100Taint, kGpuTaint}},
      // Only the A100 nodes hold 8 GPUs.
      {"more GPUs than the T4 pool has", toleration_pod("8"), json{kA100Taint, kGpuTaint}},
      // Not narrowed: the A100 pool's taint reserves it, and stays untolerated.
      {"not narrowed", toleration_pod("1"), json{kGpuTaint}},
  }));
  CAPTURE(about);
  const auto view = view_of("two-pools");
  const auto r = check(object, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}

TEST_CASE("with no node offering the GPU (a pool scaled to zero), the policy's tolerations are added",
          "[gpu-tolerations]") {
  // An autoscaler never scales up a tainted pool for a pod that does not tolerate its taint.
  const auto view = view_of("cpu-only");
  const auto r = check(toleration_pod("1"), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  const json expected =
      json::parse(R"([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])");
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}

TEST_CASE("gpu-tolerations adds the policy toleration only when none covers it",
          "[rules][tolerations][gpu-tolerations]") {
  auto [tolerations, added] = GENERATE(table<const char*, bool>({
      {"[]", true},
      {"[{key: nvidia.com/gpu, operator: Exists}]", false},
      {"[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", false},
      {"[{operator: Exists}]", false},
      {"[{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}]", true},
      {"[{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]", true},
      {"[{key: other, operator: Exists}]", true},
  }));
  CAPTURE(tolerations);
  const auto r = check(pod_with_spec(
      std::string("  tolerations: ") + tolerations +
      "\n  containers: [{name: a, resources: {limits: {cpu: 1, memory: 16Gi, nvidia.com/gpu: 1}}}]"));
  const json wanted = {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  const std::size_t original = gpuadmit::test::yaml(std::string("t: ") + tolerations)["t"].size();
  const json& stored = r.fixed["spec"]["tolerations"];
  CHECK(stored.size() == original + (added ? 1U : 0U));
  if (added) CHECK(stored.back() == wanted);
}

TEST_CASE("with a cluster view, gpu-tolerations tolerates the GPU nodes' exact taints, not reservations",
          "[cluster][tolerations][gpu-tolerations]") {
  // t4-0's dedicated=inference reserves that node; node.kubernetes.io/* taints are Kubernetes' own.
  const auto r = check(gpu_pod("1"), gpu_cluster_view());
  const json expected = json::parse(R"([
    {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}])");
  CHECK(r.fixed["spec"]["tolerations"] == expected);
}

TEST_CASE("a custom taint every GPU node carries is tolerated", "[cluster][tolerations][gpu-tolerations]") {
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
          "[cluster][tolerations][gpu-tolerations]") {
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
