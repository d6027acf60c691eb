// ClusterWatcher: the live cluster view `gpuadmit serve` hands to the cluster-aware rules. It runs one
// Reflector thread per kind (Nodes, ResourceQuotas, StorageClasses, PersistentVolumeClaims, and the DRA
// kinds DeviceClasses, ResourceSlices, ResourceClaims, ResourceClaimTemplates when the API serves them), a
// rebuild thread and a probe thread, all writing into one SnapshotStore. Requests call view() once and keep
// what it returns.
//
// Wiring (composition root):
//   auto config = cluster::resolve_api_config(kubeconfig_flag);          // or in_cluster_config()
//   auto transport = cluster::make_https_transport(*config);
//   cluster::ClusterWatcher watcher(*transport, options);
//   watcher.start();
//   readiness.add_condition("cluster view synced", [&] { return watcher.synced(); });
//   ... per request: policy::ClusterView view = watcher.view();
//   ... /metrics: watcher.stats()
//   watcher.stop();  // on shutdown (the destructor does it too)
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "gpuadmit/cluster/clock.hpp"
#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/cluster/reflector.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "gpuadmit/cluster/transport.hpp"

namespace gpuadmit::cluster {

// What the probe asks: public to every client (the default system:public-info-viewer role), cheap, and
// served without etcd.
inline constexpr std::string_view kProbeTarget = "/version";

struct WatcherOptions {
  ReflectorOptions reflector{};
  StoreOptions store{};
  LogSink log = spdlog_sink();
  // How often the view's staleness is looked at, to log when it turns stale and when it is current again.
  std::chrono::milliseconds stale_check_interval{1'000};
  // The API server is asked kProbeTarget this often, each time on a connection of its own, and the view is
  // current only as of its last answer (SnapshotStore::expect_probes). Without it, a watch stream that is
  // open but silent (a partition that holds packets, an API server stuck in shutdown) looks current until
  // the transport's idle timeout (150 s) ends it; client-go's HTTP/2 health check (a ping after 30 s
  // without a frame) is there for the same reason. Zero: no probes.
  std::chrono::milliseconds probe_interval{10'000};
  // Called on the rebuild thread after each snapshot is published (the composition root reports the GPU
  // resources the nodes advertise and the policy does not list: unlisted_gpus.hpp). Must not block.
  std::function<void(const policy::ClusterSnapshot&)> on_rebuilt;
};

class ClusterWatcher {
 public:
  ClusterWatcher(std::shared_ptr<ApiTransport> transport, WatcherOptions options = {},
                 const Clock& clock = steady_clock());
  ClusterWatcher(const ClusterWatcher&) = delete;
  ClusterWatcher& operator=(const ClusterWatcher&) = delete;
  ~ClusterWatcher();  // stop()

  // Starts the threads; returns at once (the first sync happens in the background). Call once.
  void start();
  // Interrupts in-flight requests and joins the threads; idempotent. After stop(), view() still answers
  // with the last snapshot.
  void stop();

  // The three a server needs; thread-safe, and never blocked by the watch threads or a rebuild.
  [[nodiscard]] bool synced() const noexcept { return store_.synced(); }
  [[nodiscard]] policy::ClusterView view() const { return store_.view(); }
  [[nodiscard]] ClusterStats stats() const { return store_.stats(); }

  // Blocks until synced() or `timeout`; for start-up logs, the CLI and tests.
  bool wait_for_sync(std::chrono::milliseconds timeout) const;

  [[nodiscard]] SnapshotStore& store() noexcept { return store_; }

 private:
  void rebuild_loop(std::stop_token stop);
  void log_synced() const;
  void stale_log_loop(std::stop_token stop);
  void probe_loop(std::stop_token stop);

  std::shared_ptr<ApiTransport> transport_;
  WatcherOptions options_;
  const Clock& clock_;
  SnapshotStore store_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<std::jthread> threads_;  // last: joined before the members they use are destroyed
};

}  // namespace gpuadmit::cluster
