// gpu-type: steer a GPU pod to the GPUs it asks for (gpuadmit.io/gpu-type, gpuadmit.io/gpu-memory-min),
// using the product labels that exist in this cluster.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::required_node_terms;
using nlohmann::json;

TEST_CASE("gpu-type adds required affinity on product values that exist", "[cluster][gpu-type]") {
  json object = gpu_pod("1");
  object["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "a100"}};
  const auto r = check(object, gpu_cluster_view());
  CHECK(r.allowed);
  const json& terms = required_node_terms(r);
  REQUIRE(terms.size() == 1);
  CHECK(
      terms[0]["matchExpressions"][0] ==
      json::parse(R"({"key":"nvidia.com/gpu.product","operator":"In","values":["NVIDIA-A100-SXM4-40GB"]})"));
}

TEST_CASE("gpu-type keeps the user's affinity terms and ANDs into each", "[cluster][gpu-type]") {
  json object = gpu_pod("1");
  object["metadata"]["annotations"] = {{"gpuadmit.io/gpu-memory-min", "40Gi"}};
  object["spec"]["affinity"] =
      json::parse(R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
                            {"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}})");
  const auto r = check(object, gpu_cluster_view());
  const json& terms = required_node_terms(r);
  REQUIRE(terms.size() == 2);
  for (const json& term : terms) {
    CHECK(term["matchExpressions"].size() == 2);
    CHECK(term["matchExpressions"][1]["values"] ==
          json::parse(R"(["NVIDIA-A100-SXM4-40GB","NVIDIA-H100-80GB-HBM3"])"));
  }
}

TEST_CASE("gpu-type denies a GPU the cluster does not have and lists the models", "[cluster][gpu-type]") {
  json object = gpu_pod("1");
  object["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "b200"}};
  const auto r = check(object, gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  CHECK(r.violations.at(0).rule == "gpu-type");
  CHECK_THAT(
      r.violations.at(0).message,
      Catch::Contains(
          "The GPUs here: NVIDIA-A100-SXM4-40GB (40Gi, 2 nodes), NVIDIA-H100-80GB-HBM3 (79Gi, 1 node), "
          "Tesla-T4 (15Gi, 1 node)"));
}

namespace {

// A pool of three A100 nodes that differ only in name and hostname (one node group), and one H100 node.
gpuadmit::policy::ClusterView pool_view() {
  json items = json::array();
  const auto add = [&](const std::string& name, const std::string& product, const std::string& memory) {
    items.push_back(
        {{"kind", "Node"},
         {"metadata",
          {{"name", name},
           {"labels",
            {{"kubernetes.io/hostname", name},
             {"nvidia.com/gpu.product", product},
             {"nvidia.com/gpu.memory", memory}}}}},
         {"status",
          {{"allocatable", {{"cpu", "32"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}}},
           {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  };
  for (const char* name : {"a100-0", "a100-1", "a100-2"}) add(name, "NVIDIA-A100-SXM4-40GB", "40960");
  add("h100-0", "NVIDIA-H100-80GB-HBM3", "81559");
  auto snapshot = gpuadmit::policy::snapshot_from_list(json{{"kind", "List"}, {"items", items}});
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

}  // namespace

TEST_CASE("gpu-type counts a pool of identical nodes whole, and judges a pod that names a node by that node",
          "[cluster][gpu-type]") {
  const auto view = pool_view();
  REQUIRE(view.snapshot->node_groups.size() == 2);
  json absent = gpu_pod("1");
  absent["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "b200"}};
  CHECK_THAT(check(absent, view).violations.at(0).message,
             Catch::Contains("The GPUs here: NVIDIA-A100-SXM4-40GB (40Gi, 3 nodes), "
                             "NVIDIA-H100-80GB-HBM3 (79Gi, 1 node)"));
  // Validated, not fixed: the pod asks for an H100 but names a node of the A100 pool.
  json stray = gpu_pod("1");
  stray["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "h100"}};
  stray["spec"]["nodeSelector"] = {{"kubernetes.io/hostname", "a100-2"}};
  const auto decision =
      gpuadmit::test::run(stray, gpuadmit::policy::Mode::kValidate,
                          gpuadmit::test::policy_with("    gpu-type: {action: enforce}\n"), &view);
  const auto found = std::find_if(decision.violations.begin(), decision.violations.end(),
                                  [](const auto& v) { return v.rule == "gpu-type"; });
  REQUIRE(found != decision.violations.end());
  CHECK_THAT(found->message, Catch::Contains("could be scheduled on node a100-2 (NVIDIA-A100-SXM4-40GB)"));
}
