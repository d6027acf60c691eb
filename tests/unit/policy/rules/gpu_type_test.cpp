// gpu-type: steer a GPU pod to the GPUs it asks for (gpuadmit.io/gpu-type, gpuadmit.io/gpu-memory-min),
// using the product labels that exist in this cluster.
#include <catch2/catch.hpp>

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
