#include "gpuadmit/cluster/metrics_text.hpp"

#include <fmt/format.h>

namespace gpuadmit::cluster {
namespace {

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

template <typename Value>
void per_kind(std::string& out, std::string_view name, std::string_view type, std::string_view help,
              const ClusterStats& stats, Value value) {
  header(out, name, type, help);
  for (const Kind kind : kAllKinds) {
    out += fmt::format("{}{{kind=\"{}\"}} {}\n", name, info(kind).resource, value(stats.kinds[index(kind)]));
  }
}

}  // namespace

std::string prometheus_text(const ClusterStats& stats) {
  std::string out;
  header(out, "gpuadmit_cluster_synced", "gauge", "1 once every watched kind has been listed.");
  out += fmt::format("gpuadmit_cluster_synced {}\n", stats.synced ? 1 : 0);
  header(out, "gpuadmit_cluster_stale", "gauge",
         "1 while the cluster view is stale: not synced, or for too long a kind without a working watch or "
         "no answer from the API server.");
  out += fmt::format("gpuadmit_cluster_stale {}\n", stats.stale ? 1 : 0);
  header(out, "gpuadmit_cluster_snapshot_age_seconds", "gauge",
         "Seconds since the cluster snapshot was last known to match the API server.");
  out += fmt::format("gpuadmit_cluster_snapshot_age_seconds {:.3f}\n", stats.snapshot_age_seconds);
  header(out, "gpuadmit_cluster_snapshot_rebuilds_total", "counter",
         "Cluster snapshots built and published.");
  out += fmt::format("gpuadmit_cluster_snapshot_rebuilds_total {}\n", stats.snapshot_rebuilds);
  header(out, "gpuadmit_cluster_probe_failures_total", "counter",
         "Probes of the API server (GET /version) that got no answer: connection, TLS or deadline.");
  out += fmt::format("gpuadmit_cluster_probe_failures_total {}\n", stats.probe_failures);
  header(out, "gpuadmit_cluster_seconds_since_probe_answer", "gauge",
         "Seconds since the API server last answered a probe.");
  out +=
      fmt::format("gpuadmit_cluster_seconds_since_probe_answer {:.3f}\n", stats.seconds_since_probe_answer);
  per_kind(out, "gpuadmit_cluster_objects", "gauge", "Objects in the cluster cache, by kind.", stats,
           [](const KindStats& k) { return k.objects; });
  per_kind(out, "gpuadmit_cluster_available", "gauge",
           "0 while an optional kind (the DRA kinds, Karpenter's NodePools) is not served or forbidden and "
           "the view "
           "goes without it, "
           "by kind.",
           stats, [](const KindStats& k) { return k.available ? 1 : 0; });
  per_kind(out, "gpuadmit_cluster_watching", "gauge", "1 while a watch stream is open, by kind.", stats,
           [](const KindStats& k) { return k.watching ? 1 : 0; });
  per_kind(out, "gpuadmit_cluster_watch_restarts_total", "counter",
           "Watches opened after the first (scheduled timeouts included), by kind.", stats,
           [](const KindStats& k) { return k.watch_restarts; });
  per_kind(out, "gpuadmit_cluster_relists_total", "counter",
           "LISTs after the first (410 Gone, undecodable events), by kind.", stats,
           [](const KindStats& k) { return k.relists; });
  per_kind(out, "gpuadmit_cluster_failures_total", "counter",
           "Failed LISTs and watches (connection, TLS, HTTP status, ERROR events), by kind.", stats,
           [](const KindStats& k) { return k.failures; });
  per_kind(out, "gpuadmit_cluster_malformed_events_total", "counter",
           "Watch lines that could not be decoded, objects that did not parse and subtrees nested too deep "
           "that were left out, by kind.",
           stats, [](const KindStats& k) { return k.malformed_events; });
  return out;
}

}  // namespace gpuadmit::cluster
