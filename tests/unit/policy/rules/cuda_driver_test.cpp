// cuda-driver: an image built for a CUDA newer than the node's driver fails at its first CUDA call; warn
// when the GPU nodes' drivers are too old, and under enforce keep the pod on nodes whose driver is not.
#include <catch2/catch.hpp>

#include "gpuadmit/config/policy_loader.hpp"
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

TEST_CASE("an image whose tag does not say its CUDA takes it from the policy's imageCuda, its tag's first",
          "[cluster][cuda][cuda-driver]") {
  const auto [image, said] = GENERATE(table<std::string, std::string>({
      // NVIDIA's release notes: "Release 25.12 is based on CUDA 13.1.0" (a default entry).
      {"nvcr.io/nvidia/pytorch:25.12-py3", "CUDA 13.1 needs driver ≥ 580.65"},
      // An entry the policy adds.
      {"vllm/vllm-openai:v0.4.0", "CUDA 12.4 needs driver ≥ 550.54"},
      // A tag's own cudaX.Y wins over a matching pattern.
      {"vllm/vllm-openai:v0.4.0-cuda12.2", "CUDA 12.2 needs driver ≥ 535.54"},
      // Default rows from vLLM's release pipeline at each tag, any registry in front.
      {"vllm/vllm-openai:v0.9.0", "CUDA 12.8 needs driver ≥ 570.26"},
      {"docker.io/vllm/vllm-openai:v0.7.3", "CUDA 12.1 needs driver ≥ 530.30"},
      // The longest matching pattern wins: v0.20's -cu129 image over v0.20's CUDA 13.0.
      {"vllm/vllm-openai:v0.20.0", "CUDA 13.0 needs driver ≥ 580.65"},
      {"vllm/vllm-openai:v0.20.0-cu129", "CUDA 12.9 needs driver ≥ 575.51"},
      // Triton's release notes: "Release 24.07 is based on CUDA 12.5.1".
      {"nvcr.io/nvidia/tritonserver:24.07-py3", "CUDA 12.5 needs driver ≥ 555.42"},
      // Neither: nothing is said (NGC PyTorch 24.01's notes were not read, so it has no row).
      {"nvcr.io/nvidia/pytorch:24.01-py3", ""},
  }));
  CAPTURE(image);
  RuleSet rules;
  rules.cuda_driver.image_cuda = gpuadmit::policy::default_image_cuda();
  rules.cuda_driver.image_cuda["vllm/vllm-openai:v0.4.0*"] = "12.4";
  const std::string text = all_text(check(gpu_pod_with("1", "image", image), gpu_cluster_view(), rules));
  if (said.empty()) {
    CHECK(text.find("cuda-driver") == std::string::npos);
  } else {
    CHECK_THAT(text, Catch::Contains(said));
  }
}

TEST_CASE("an imageCuda value that is not a CUDA version is a policy error", "[cuda-driver]") {
  const auto rules = gpuadmit::config::load_policy(
      "apiVersion: gpuadmit.io/v1alpha1\nkind: Policy\nspec:\n  rules:\n    cuda-driver:\n"
      "      imageCuda: {\"nvcr.io/nvidia/pytorch:24.01-*\": twelve}\n",
      "p.yaml");
  REQUIRE_FALSE(rules.ok());
  CHECK_THAT(rules.error().message, Catch::Contains("\"twelve\" is not a CUDA version such as 12.3"));
}
