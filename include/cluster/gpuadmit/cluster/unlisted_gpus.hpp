// GPU resources the nodes advertise and the policy does not list (#19, item 5): a node pool that brings a
// new resource name (nvidia.com/gpu.shared under time-slicing, a vendor's new device plugin) is invisible to
// every GPU rule until spec.gpuResources names it. The cluster view reports each such name once in its log
// and, for as long as nodes advertise it, in gpuadmit_unlisted_gpu_resources{resource} (how many nodes).
//
// What "looks like a GPU" is a small heuristic (docs/cluster.md): an extended resource (DOMAIN/NAME, not a
// kubernetes.io domain) whose name contains "gpu", or that an accelerator vendor's device plugin advertises
// (nvidia.com/, amd.com/, gpu.intel.com/, habana.ai/, aws.amazon.com/neuron, google.com/tpu); except the GPU
// share qualifiers (policy/gpu_share.hpp: they qualify a GPU, they are not one) and the vendors' network
// devices (a NAME with rdma, sriov, nic or hostdev). A false positive costs a log line and a series, never a
// verdict: the rules read the policy's list, not this.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::cluster {

[[nodiscard]] bool looks_like_gpu(std::string_view resource) noexcept;

// Resource → how many nodes have a positive allocatable amount of it, for each resource that looks like a
// GPU and is not a GPU resource of `rules`.
std::map<std::string, std::size_t, std::less<>> unlisted_gpu_resources(
    const policy::ClusterSnapshot& snapshot, const policy::RuleSet& rules);

// The report, kept across snapshots and policy reloads. Thread-safe: the watcher's rebuild thread updates
// it, /metrics reads (and updates) it.
class UnlistedGpuReport {
 public:
  // At most this many names are logged (each once); a cluster has a handful.
  static constexpr std::size_t kMaxLogged = 256;

  explicit UnlistedGpuReport(LogSink log) : log_(std::move(log)) {}

  // Recomputes from `snapshot` and the policy in force, and logs (warn) each name not logged before. A name
  // the policy lists after a reload, or that no node advertises any more, leaves the series.
  void update(const policy::ClusterSnapshot& snapshot, const policy::RuleSet& rules);
  // gpuadmit_unlisted_gpu_resources{resource="..."} per name (HELP and TYPE even when there is none).
  [[nodiscard]] std::string prometheus_text() const;
  [[nodiscard]] std::map<std::string, std::size_t, std::less<>> current() const;

 private:
  LogSink log_;
  mutable std::mutex mutex_;
  std::map<std::string, std::size_t, std::less<>> current_;  // guarded by mutex_
  std::set<std::string, std::less<>> logged_;                // guarded by mutex_
};

}  // namespace gpuadmit::cluster
