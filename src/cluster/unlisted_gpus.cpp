#include "gpuadmit/cluster/unlisted_gpus.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "gpuadmit/policy/gpu_share.hpp"

namespace gpuadmit::cluster {
namespace {

// The device plugins' domains (and prefixes) of accelerators that are GPUs or that pods ask for as GPUs.
constexpr std::array<std::string_view, 6> kAcceleratorPrefixes{
    "nvidia.com/", "amd.com/", "gpu.intel.com/", "habana.ai/", "aws.amazon.com/neuron", "google.com/tpu"};
// What the same vendors advertise for their network devices (NVIDIA's network operator, SR-IOV plugins).
constexpr std::array<std::string_view, 4> kNetworkWords{"rdma", "sriov", "nic", "hostdev"};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains_any(std::string_view text, const auto& words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return text.find(w) != std::string_view::npos; });
}

// Prometheus label value escaping: backslash, double quote and newline.
std::string label_value(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool looks_like_gpu(std::string_view resource) noexcept {
  const std::size_t slash = resource.find('/');
  if (slash == std::string_view::npos || slash == 0) return false;  // cpu, memory, hugepages-2Mi, pods
  const std::string domain = lower(resource.substr(0, slash));
  if (domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")) return false;
  if (policy::is_gpu_share_resource(resource)) return false;
  const std::string name = lower(resource.substr(slash + 1));
  if (contains_any(name, kNetworkWords)) return false;
  if (name.find("gpu") != std::string::npos) return true;
  const std::string whole = lower(resource);
  return std::any_of(kAcceleratorPrefixes.begin(), kAcceleratorPrefixes.end(),
                     [&](std::string_view prefix) { return whole.starts_with(prefix); });
}

std::map<std::string, std::size_t, std::less<>> unlisted_gpu_resources(
    const policy::ClusterSnapshot& snapshot, const policy::RuleSet& rules) {
  std::map<std::string, std::size_t, std::less<>> out;
  for (const auto& [resource, nodes] : snapshot.nodes_by_resource) {
    if (!nodes.empty() && looks_like_gpu(resource) && !rules.is_gpu_resource(resource))
      out.emplace(resource, nodes.size());
  }
  return out;
}

void UnlistedGpuReport::update(const policy::ClusterSnapshot& snapshot, const policy::RuleSet& rules) {
  auto found = unlisted_gpu_resources(snapshot, rules);
  std::vector<std::pair<std::string, std::size_t>> fresh;
  {
    const std::lock_guard lock(mutex_);
    for (const auto& [resource, nodes] : found) {
      if (logged_.size() < kMaxLogged && logged_.insert(resource).second) fresh.emplace_back(resource, nodes);
    }
    current_ = std::move(found);
  }
  for (const auto& [resource, nodes] : fresh) {
    log_(spdlog::level::warn, "nodes advertise a GPU resource the policy does not list",
         {{"resource", resource},
          {"nodes", nodes},
          {"hint",
           "if it is a GPU, add it to the policy's spec.gpuResources so the GPU rules count it "
           "(docs/cluster.md)"}});
  }
}

std::string UnlistedGpuReport::prometheus_text() const {
  std::string out =
      "# HELP gpuadmit_unlisted_gpu_resources Nodes advertising a resource that looks like a GPU and that "
      "the "
      "policy's gpuResources does not list, by resource.\n"
      "# TYPE gpuadmit_unlisted_gpu_resources gauge\n";
  const std::lock_guard lock(mutex_);
  for (const auto& [resource, nodes] : current_)
    out +=
        fmt::format("gpuadmit_unlisted_gpu_resources{{resource=\"{}\"}} {}\n", label_value(resource), nodes);
  return out;
}

std::map<std::string, std::size_t, std::less<>> UnlistedGpuReport::current() const {
  const std::lock_guard lock(mutex_);
  return current_;
}

}  // namespace gpuadmit::cluster
