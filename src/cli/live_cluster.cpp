#include "live_cluster.hpp"

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/reflector.hpp"

namespace gpuadmit::cli {

Result<std::shared_ptr<cluster::ApiTransport>> connect(const std::optional<std::string>& kubeconfig,
                                                       const std::string& context) {
  auto config = cluster::resolve_api_config(kubeconfig, context);
  if (!config) return config.error();
  return cluster::make_https_transport(std::move(*config));
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
                        const std::string& path,
                        const std::function<Result<bool>(nlohmann::json&&)>& on_item) {
  std::optional<Error> failed;
  auto listed = cluster::list_pages_at(transport, path, served.resource, 500, {}, [&](nlohmann::json&& item) {
    if (failed || !item.is_object()) return;
    item["kind"] = served.kind;
    item["apiVersion"] = served.api_version;
    if (auto done = on_item(std::move(item)); !done) failed = done.error();
  });
  if (!listed) return listed.error();
  if (failed) return *failed;
  return true;
}

}  // namespace gpuadmit::cli
