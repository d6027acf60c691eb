// The seam between the webhook and the live cluster view. The server layer does not know the cluster layer
// (the composition root wires the two, see docs/cluster.md): it sees a provider that starts, stops, says
// whether the first full sync happened, hands out a view per review and renders its own /metrics lines. It
// reads the cluster policy in force (to report the GPU resources nodes advertise that the policy does not
// list), through a function serve hands it at start.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/rule_set.hpp"
#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {

struct WebhookConfig;

class ClusterViewProvider {
 public:
  ClusterViewProvider() = default;
  ClusterViewProvider(const ClusterViewProvider&) = delete;
  ClusterViewProvider& operator=(const ClusterViewProvider&) = delete;
  ClusterViewProvider(ClusterViewProvider&&) = delete;
  ClusterViewProvider& operator=(ClusterViewProvider&&) = delete;
  virtual ~ClusterViewProvider() = default;

  // The cluster policy in force; it changes on reload, so it is asked each time it is needed.
  using Rules = std::function<std::shared_ptr<const policy::RuleSet>()>;
  // Returns at once; the first sync happens in the background. Called once. `rules` may be empty (tests):
  // then nothing is compared with the policy.
  virtual void start(Rules rules) = 0;
  // Idempotent; view() keeps answering with the last snapshot afterwards.
  virtual void stop() = 0;
  // The rest are called from request threads: thread-safe and never blocking on the API server.
  [[nodiscard]] virtual bool synced() const = 0;
  [[nodiscard]] virtual policy::ClusterView view() const = 0;
  // Prometheus text (0.0.4) appended to /metrics: snapshot age, watch restarts, objects cached, the GPU
  // resources the policy does not list, ...
  [[nodiscard]] virtual std::string metrics_text() const = 0;
};

// How `gpuadmit serve` gets its provider: the CLI resolves --kubeconfig / in-cluster / --cluster-view into
// this, and serve calls `make` once its log exists (so the provider can log through it).
struct ClusterViewSetup {
  using Factory = std::function<Result<std::unique_ptr<ClusterViewProvider>>(const JsonLog&)>;
  Factory make;            // empty: no cluster view; the cluster-aware rules are skipped
  std::string source;      // for the start-up log: "kubeconfig FILE", "in-cluster"
  std::string off_reason;  // when `make` is empty: why, for the start-up log
};

// Wires `provider` into `config`: the view each review reads (taken once per request), the /readyz
// condition "cluster view synced", and the provider's series appended to /metrics. The provider must
// outlive the webhook built from `config`.
void attach_cluster_view(WebhookConfig& config, const ClusterViewProvider& provider);

}  // namespace gpuadmit::server
