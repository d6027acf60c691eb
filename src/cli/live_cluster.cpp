#include "live_cluster.hpp"

#include <cstdio>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/reflector.hpp"

namespace gpuadmit::cli {

Result<cluster::ApiConfig> api_config(const std::optional<std::string>& kubeconfig,
                                      const cluster::KubeconfigSelection& selection) {
  auto config = cluster::resolve_api_config(kubeconfig, selection);
  if (config && config->insecure_skip_tls_verify) {
    std::fprintf(
        stderr,
        "WARNING: %s has insecure-skip-tls-verify: the API server's certificate is NOT verified, so anyone "
        "on the network path can read this session and change what gpuadmit reports. Give the cluster's "
        "certificate-authority instead.\n",
        config->source.c_str());
  }
  return config;
}

Result<std::shared_ptr<cluster::ApiTransport>> connect(cluster::ApiConfig config) {
  return cluster::make_https_transport(std::move(config));
}

Result<std::shared_ptr<cluster::ApiTransport>> connect(const std::optional<std::string>& kubeconfig,
                                                       const cluster::KubeconfigSelection& selection) {
  auto config = api_config(kubeconfig, selection);
  if (!config) return config.error();
  return connect(std::move(*config));
}

Result<LiveView> live_view(cluster::ApiTransport& transport) {
  auto dump = cluster::dump_cluster(transport);
  if (!dump) return dump.error();
  auto snapshot = policy::snapshot_from_list(dump->list);
  if (!snapshot) return snapshot.error();
  LiveView live{std::move(*dump), {}};
  live.view.snapshot = std::make_shared<const policy::ClusterSnapshot>(std::move(*snapshot));
  return live;
}

Result<bool> list_items(cluster::ApiTransport& transport, const cluster::ServedKind& served,
                        const std::string& path, const std::function<Result<bool>(nlohmann::json&&)>& on_item,
                        std::stop_token stop, int* status) {
  std::optional<Error> failed;
  auto listed = cluster::list_pages_at(
      transport, path, served.resource, 500, std::move(stop),
      [&](nlohmann::json&& item) {
        if (failed || !item.is_object()) return;
        item["kind"] = served.kind;
        item["apiVersion"] = served.api_version;
        if (auto done = on_item(std::move(item)); !done) failed = done.error();
      },
      status);
  if (!listed) return listed.error();
  if (failed) return *failed;
  return true;
}

namespace {

constexpr int kForbidden = 403;

// The claims and the workloads of the kinds the API serves, held for Auditor::audit_held.
Result<std::vector<nlohmann::json>> held_objects(cluster::ApiTransport& transport,
                                                 const policy::RuleSet& rules, const AuditScope& scope,
                                                 const std::stop_token& stop) {
  std::vector<nlohmann::json> held;
  const auto keep = [&](nlohmann::json&& item) -> Result<bool> {
    held.push_back(std::move(item));
    return true;
  };
  const cluster::ServedKind claims{"v1", "PersistentVolumeClaim", "persistentvolumeclaims", true};
  if (auto listed = list_items(transport, claims, claims.path(), keep, stop); !listed) return listed.error();
  for (const policy::WorkloadKind& workload : rules.workloads) {
    auto served = cluster::discover_kinds(transport, workload.api_group, workload.kinds, stop);
    if (!served) return served.error();
    for (const cluster::ServedKind& kind : *served) {
      int status = 0;
      auto listed = list_items(transport, kind, kind.path(), keep, stop, &status);
      if (!listed && status == kForbidden && scope.on_forbidden) {
        scope.on_forbidden(kind, listed.error().message);
        continue;
      }
      if (!listed) return listed.error();
    }
  }
  return held;
}

}  // namespace

Result<admission::Audit> audit_cluster(cluster::ApiTransport& transport, const policy::PolicySet& policies,
                                       const policy::ClusterView& view, const AuditScope& scope,
                                       std::stop_token stop) {
  const auto go_on = [&]() -> Result<bool> {
    if (stop.stop_requested()) return make_error("stopped");
    if (scope.keep_going && !scope.keep_going()) return make_error("stopped: no longer the auditing replica");
    return true;
  };
  auto held = held_objects(transport, *policies.cluster, scope, stop);
  if (!held) return held.error();
  if (auto going = go_on(); !going) return going.error();
  admission::Auditor auditor(policies, &view, scope.only_namespace);
  if (auto done = auditor.audit_held(*held); !done) return done.error();
  held->clear();
  const cluster::ServedKind pods{"v1", "Pod", "pods", true};
  auto listed = list_items(
      transport, pods, pods.path(),
      [&](nlohmann::json&& pod) -> Result<bool> {
        if (auto going = go_on(); !going) return going;
        return auditor.audit_pod(pod);
      },
      stop);
  if (!listed) return listed.error();
  return auditor.audit();
}
}  // namespace gpuadmit::cli
