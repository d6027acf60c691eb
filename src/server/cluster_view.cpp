#include "gpuadmit/server/cluster_view.hpp"

#include "gpuadmit/server/webhook.hpp"

namespace gpuadmit::server {

void attach_cluster_view(WebhookConfig& config, const ClusterViewProvider& provider) {
  // Before the first full sync the view would be an empty cluster, on which node-fit would deny every pod;
  // /readyz keeps the replica out of the Service until then, and a review that arrives anyway (a direct
  // call) gets no view, so the cluster-aware rules are skipped rather than wrong.
  config.cluster_view = [&provider]() -> std::optional<policy::ClusterView> {
    if (!provider.synced()) return std::nullopt;
    return provider.view();
  };
  config.readiness_conditions.emplace_back("cluster view synced", [&provider] { return provider.synced(); });
  config.extra_metrics = [&provider] { return provider.metrics_text(); };
}

}  // namespace gpuadmit::server
