// The cluster view's counters in the Prometheus text format (0.0.4), so the server can append them to its
// /metrics output without either layer knowing the other's types:
//   gpuadmit_cluster_synced, gpuadmit_cluster_stale, gpuadmit_cluster_snapshot_age_seconds,
//   gpuadmit_cluster_snapshot_rebuilds_total, and per kind (label kind="nodes", ...):
//   gpuadmit_cluster_objects, gpuadmit_cluster_available, gpuadmit_cluster_watching,
//   gpuadmit_cluster_watch_restarts_total, gpuadmit_cluster_relists_total, gpuadmit_cluster_failures_total,
//   gpuadmit_cluster_malformed_events_total.
#pragma once

#include <string>

#include "gpuadmit/cluster/snapshot_store.hpp"

namespace gpuadmit::cluster {

std::string prometheus_text(const ClusterStats& stats);

}  // namespace gpuadmit::cluster
