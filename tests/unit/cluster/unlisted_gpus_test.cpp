#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/unlisted_gpus.hpp"

namespace gpuadmit::test {
namespace {

// A node whose allocatable has cpu, memory and `extra` (resource → amount).
k8s::Node node_with(const std::string& name, const nlohmann::json& extra) {
  nlohmann::json allocatable = {{"cpu", "8"}, {"memory", "64Gi"}};
  allocatable.update(extra);
  const nlohmann::json object = {
      {"metadata", {{"name", name}}},
      {"status", {{"allocatable", allocatable}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  return std::get<k8s::Node>(cluster::parse_object(cluster::Kind::kNode, object).value());
}

policy::ClusterSnapshot cluster_of(std::vector<k8s::Node> nodes) {
  return policy::make_snapshot(std::move(nodes), {}, {}, {});
}

struct Logged {
  cluster::LogSink sink() {
    return [this](spdlog::level::level_enum level, std::string_view msg, const cluster::LogFields& fields) {
      const std::lock_guard lock(mutex);
      if (level == spdlog::level::warn && msg == "nodes advertise a GPU resource the policy does not list")
        resources.push_back(fields["resource"].get<std::string>() + " on " + fields["nodes"].dump());
    };
  }
  std::mutex mutex;
  std::vector<std::string> resources;
};

}  // namespace

TEST_CASE(
    "a node resource looks like a GPU by its name or its accelerator vendor, never a core resource, a "
    "share or a NIC",
    "[unlisted]") {
  const std::vector<std::pair<const char*, bool>> cases{
      {"nvidia.com/gpu", true},
      {"nvidia.com/gpu.shared", true},
      {"nvidia.com/mig-1g.10gb", true},
      {"nvidia.com/a100", true},  // a renamed resource of the GPU operator
      {"amd.com/gpu", true},
      {"gpu.intel.com/xe", true},
      {"habana.ai/gaudi", true},
      {"aws.amazon.com/neuroncore", true},
      {"google.com/tpu", true},
      {"example.com/vgpu", true},
      {"Example.COM/GPU-small", true},
      {"volcano.sh/vgpu-number", true},
      {"cpu", false},
      {"memory", false},
      {"hugepages-2Mi", false},
      {"ephemeral-storage", false},
      {"pods", false},
      {"kubernetes.io/gpu-like", false},
      {"node.kubernetes.io/gpu", false},
      {"nvidia.com/gpumem", false},  // HAMi's share qualifiers
      {"nvidia.com/gpucores", false},
      {"volcano.sh/vgpu-memory", false},
      {"volcano.sh/gpu-memory", false},
      {"nvidia.com/rdma_shared_device_a", false},  // NVIDIA's network operator
      {"nvidia.com/hostdev", false},
      {"intel.com/sriov_netdevice", false},
      {"example.com/fpga", false},
      {"smarter-devices/fuse", false},
      {"/gpu", false},
  };
  for (const auto& [resource, gpu] : cases) {
    INFO(resource);
    CHECK(cluster::looks_like_gpu(resource) == gpu);
  }
}

TEST_CASE(
    "the unlisted GPU resources are those that look like GPUs, that nodes have and the policy does not "
    "list, with their node counts",
    "[unlisted]") {
  const auto snapshot = cluster_of({
      node_with("a", {{"nvidia.com/gpu", "8"}}),
      node_with("b", {{"nvidia.com/gpu.shared", "32"}, {"nvidia.com/gpumem", "81920"}}),
      node_with("c", {{"example.com/vgpu", "4"}, {"nvidia.com/rdma_shared_device_a", "1"}}),
      node_with("d", {{"example.com/vgpu", "4"}, {"nvidia.com/mig-1g.10gb", "7"}}),
      node_with("e", {{"example.com/vgpu", "0"}}),  // none left to give: not counted
  });
  policy::RuleSet rules;
  CHECK(cluster::unlisted_gpu_resources(snapshot, rules) ==
        std::map<std::string, std::size_t, std::less<>>{{"example.com/vgpu", 2}});
  rules.gpu_resources = {"nvidia.com/gpu"};
  CHECK(cluster::unlisted_gpu_resources(snapshot, rules) ==
        std::map<std::string, std::size_t, std::less<>>{
            {"example.com/vgpu", 2}, {"nvidia.com/gpu.shared", 1}, {"nvidia.com/mig-1g.10gb", 1}});
  rules.gpu_resources = {"nvidia.com/*", "example.com/vgpu"};
  CHECK(cluster::unlisted_gpu_resources(snapshot, rules).empty());
}

TEST_CASE("each unlisted name is logged once, and the gauge follows the nodes and the policy in force",
          "[unlisted]") {
  Logged logged;
  cluster::UnlistedGpuReport report(logged.sink());
  policy::RuleSet rules;
  rules.gpu_resources = {"nvidia.com/gpu"};
  const auto two = cluster_of(
      {node_with("a", {{"nvidia.com/gpu.shared", "4"}}), node_with("b", {{"nvidia.com/gpu.shared", "4"}})});
  report.update(two, rules);
  report.update(two, rules);  // a rebuild, then a scrape: nothing new to say
  CHECK(logged.resources == std::vector<std::string>{"nvidia.com/gpu.shared on 2"});
  CHECK_THAT(report.prometheus_text(),
             Catch::Contains("gpuadmit_unlisted_gpu_resources{resource=\"nvidia.com/gpu.shared\"} 2\n"));
  CHECK_THAT(report.prometheus_text(), Catch::Contains("# TYPE gpuadmit_unlisted_gpu_resources gauge\n"));

  // The policy reloaded with the name: it leaves the gauge.
  policy::RuleSet listed = rules;
  listed.gpu_resources.push_back("nvidia.com/gpu.shared");
  report.update(two, listed);
  CHECK(report.current().empty());
  CHECK_THAT(report.prometheus_text(), !Catch::Contains("gpuadmit_unlisted_gpu_resources{"));

  // Back to the old policy, and a new name: only the new one is logged.
  const auto three = cluster_of(
      {node_with("a", {{"nvidia.com/gpu.shared", "4"}}), node_with("c", {{"amd.com/mi300x", "8"}})});
  report.update(three, rules);
  CHECK(logged.resources == std::vector<std::string>{"nvidia.com/gpu.shared on 2", "amd.com/mi300x on 1"});
  CHECK(report.current() ==
        std::map<std::string, std::size_t, std::less<>>{{"amd.com/mi300x", 1}, {"nvidia.com/gpu.shared", 1}});
}

}  // namespace gpuadmit::test
