// cuda-driver: an image built for a CUDA whose major is newer than the node's driver fails at its first
// CUDA call; a newer minor runs under minor-version compatibility, a warning at most. Under enforce the pod
// is kept on nodes whose driver runs it.
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

namespace {

// GPU nodes with these drivers ("535.104"), one each.
gpuadmit::policy::ClusterView view_with_drivers(const std::vector<std::string>& drivers) {
  json items = json::array();
  for (std::size_t i = 0; i < drivers.size(); ++i) {
    const auto dot = drivers[i].find('.');
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata",
                      {{"name", "gpu-" + std::to_string(i)},
                       {"labels",
                        {{"nvidia.com/cuda.driver.major", drivers[i].substr(0, dot)},
                         {"nvidia.com/cuda.driver.minor", drivers[i].substr(dot + 1)}}}}},
                     {"status",
                      {{"allocatable",
                        {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}}}}}});
  }
  auto snapshot =
      gpuadmit::policy::snapshot_from_list({{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}});
  REQUIRE(snapshot.ok());
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

RuleSet enforcing() {
  RuleSet rules;
  rules.cuda_driver.action = gpuadmit::policy::Action::kEnforce;
  return rules;
}

}  // namespace

TEST_CASE("cuda-driver judges a CUDA major by its first driver and a newer minor only by its features",
          "[cluster][cuda][cuda-driver]") {
  // NVIDIA's minor-version compatibility: any CUDA 12.x application runs on a driver >= 525.60.13, any 13.x
  // on >= 580.65.06. Below the major's floor it fails at its first call; between that and its toolkit's own
  // floor it runs without the newer driver's features: a warning, never a denial.
  const auto [image, drivers, verdict,
              said] = GENERATE(table<std::string, std::vector<std::string>, std::string, std::string>({
      {"pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime",
       {"535.104", "535.104", "525.60"},
       "warn",
       "CUDA 12.4 image: every feature needs driver ≥ 550.54; runs in compatibility mode on 525.60 (1 node)"},
      {"nvidia/cuda:12.8.0-runtime-ubuntu22.04", {"550.54"}, "warn", "runs in compatibility mode on 550.54"},
      {"nvidia/cuda:12.2.0-runtime-ubuntu22.04", {"535.54", "550.127"}, "", ""},
      {"nvidia/cuda:12.2.0-runtime-ubuntu22.04",
       {"470.82"},
       "deny",
       "CUDA 12.x needs an NVIDIA driver ≥ 525.60 (minor-version compatibility), and no GPU node has it "
       "(drivers here: 470.82 (1 node))"},
      {"nvidia/cuda:13.0.1-runtime-ubuntu24.04",
       {"575.51", "570.26"},
       "deny",
       "needs an NVIDIA driver ≥ 580.65"},
      // NGC images bring the forward-compatibility libraries: a data-centre GPU may run them anyway.
      {"nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04",
       {"570.26"},
       "warn",
       "needs driver ≥ 580.65; no GPU node has it"},
  }));
  CAPTURE(image, drivers);
  const auto r = check(gpu_pod_with("1", "image", image), view_with_drivers(drivers), enforcing());
  const std::string text = all_text(r);
  if (verdict.empty()) {
    CHECK(text.find("cuda-driver") == std::string::npos);
  } else {
    CHECK(r.allowed == (verdict == "warn"));
    CHECK_THAT(text, Catch::Contains(said));
  }
}

TEST_CASE("cuda-driver in enforce mode keeps the pod on nodes whose driver runs its CUDA",
          "[cluster][cuda][cuda-driver]") {
  const auto r = check(gpu_pod_with("1", "image", "nvidia/cuda:13.0.1-runtime-ubuntu24.04"),
                       view_with_drivers({"580.95", "570.26"}), enforcing());
  CHECK(r.allowed);
  const json& terms = required_node_terms(r);
  REQUIRE(terms.size() == 2);
  CHECK(terms[0]["matchExpressions"][0]["operator"] == "Gt");
  CHECK(terms[0]["matchExpressions"][0]["values"][0] == "580");
  CHECK(terms[1]["matchExpressions"][1]["values"][0] == "64");
}

TEST_CASE("cuda-driver never steers away from nodes that run an image under minor-version compatibility",
          "[cluster][cuda][cuda-driver]") {
  const auto r = check(gpu_pod_with("1", "image", "nvidia/cuda:12.8.0-runtime-ubuntu22.04"),
                       view_with_drivers({"570.86", "535.104"}), enforcing());
  CHECK(r.allowed);
  CHECK_FALSE(r.fixed["spec"].contains("affinity"));
}

TEST_CASE("an image whose tag does not say its CUDA takes it from the policy's imageCuda, its tag's first",
          "[cluster][cuda][cuda-driver]") {
  const auto [image, said] = GENERATE(table<std::string, std::string>({
      // NVIDIA's release notes: "Release 25.12 is based on CUDA 13.1.0" (a default entry).
      {"nvcr.io/nvidia/pytorch:25.12-py3", "CUDA 13.1 needs driver ≥ 580.65"},
      // An entry the policy adds.
      {"vllm/vllm-openai:v0.4.0", "CUDA 12.4 image: every feature needs driver ≥ 550.54"},
      // A tag's own cudaX.Y wins over a matching pattern.
      {"vllm/vllm-openai:v0.4.0-cuda12.2", "CUDA 12.2 image: every feature needs driver ≥ 535.54"},
      // Default rows from vLLM's release pipeline at each tag, any registry in front.
      {"vllm/vllm-openai:v0.9.0", "every feature needs driver ≥ 570.26"},
      {"docker.io/vllm/vllm-openai:v0.7.3", "every feature needs driver ≥ 530.30"},
      // The longest matching pattern wins: v0.20's -cu129 image over v0.20's CUDA 13.0.
      {"vllm/vllm-openai:v0.20.0", "CUDA 13.0 needs driver ≥ 580.65"},
      {"vllm/vllm-openai:v0.20.0-cu129", "every feature needs driver ≥ 575.51"},
      // Triton's release notes: "Release 24.07 is based on CUDA 12.5.1".
      {"nvcr.io/nvidia/tritonserver:24.07-py3", "every feature needs driver ≥ 555.42"},
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
