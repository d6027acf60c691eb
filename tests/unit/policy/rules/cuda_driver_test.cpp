// cuda-driver: an image built for a CUDA newer than the node's driver fails at its first CUDA call; warn
// when the GPU nodes' drivers are too old, and under enforce keep the pod on nodes whose driver is not.
#include <catch2/catch.hpp>

#include "support/policy_checks.hpp"

using gpuadmit::policy::RuleSet;
using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod_with;
using gpuadmit::test::required_node_terms;
using nlohmann::json;

TEST_CASE("cuda-driver warns when no GPU node has a driver new enough for the image",
          "[cluster][cuda][cuda-driver]") {
  const auto r =
      check(gpu_pod_with("1", "image", "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime"), gpu_cluster_view());
  CHECK_THAT(
      all_text(r),
      Catch::Contains("needs driver ≥ 550.54; no GPU node has it (525.60 (1 node), 535.104 (2 nodes))"));
  CHECK_THAT(all_text(check(gpu_pod_with("1", "image", "nvidia/cuda:12.2.0-runtime-ubuntu22.04"),
                            gpu_cluster_view())),
             Catch::Contains("CUDA 12.2 needs driver ≥ 535.54; some GPU nodes do not"));
}

TEST_CASE("cuda-driver in enforce mode keeps the pod on nodes with a new enough driver",
          "[cluster][cuda][cuda-driver]") {
  RuleSet rules;
  rules.cuda_driver.action = gpuadmit::policy::Action::kEnforce;
  const auto r =
      check(gpu_pod_with("1", "image", "nvidia/cuda:12.2.0-runtime-ubuntu22.04"), gpu_cluster_view(), rules);
  CHECK(r.allowed);
  const json& terms = required_node_terms(r);
  CHECK(terms.size() == 2);
  CHECK(terms[0]["matchExpressions"][0]["operator"] == "Gt");
}
