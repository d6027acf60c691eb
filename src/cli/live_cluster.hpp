// What the commands that read a live cluster share (cluster dump, audit, why): the connection through a
// kubeconfig, the view of its nodes, quotas, storage classes, claims and DRA objects, and a collection listed
// page by page.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/audit.hpp"
#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/discovery.hpp"
#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::cli {

// --kubeconfig, else $KUBECONFIG's files merged, else ~/.kube/config, else the in-cluster service account
// (kubectl's rules, cluster/api_config.hpp), with --context and --user.
Result<cluster::ApiConfig> api_config(const std::optional<std::string>& kubeconfig,
                                      const cluster::KubeconfigSelection& selection);
Result<std::shared_ptr<cluster::ApiTransport>> connect(cluster::ApiConfig config);
Result<std::shared_ptr<cluster::ApiTransport>> connect(const std::optional<std::string>& kubeconfig,
                                                       const cluster::KubeconfigSelection& selection);

// The kinds of `cluster dump` (cluster/kinds.hpp), and the view the rules judge against.
struct LiveView {
  cluster::Dump dump;
  policy::ClusterView view;
};
Result<LiveView> live_view(cluster::ApiTransport& transport);

// Every item of the collection at `path` (served.path(), or served.path_in(ns)), page by page, each with the
// kind and apiVersion a LIST leaves out; the first error of `on_item` stops it. `status`: the last HTTP
// status, when given.
Result<bool> list_items(cluster::ApiTransport& transport, const cluster::ServedKind& served,
                        const std::string& path, const std::function<Result<bool>(nlohmann::json&&)>& on_item,
                        std::stop_token stop = {}, int* status = nullptr);

// What an audit of a live cluster lists, beyond the view: the claims, the policy's workload kinds the API
// serves, then the pods, page by page (so 100,000 pods never sit in memory at once).
struct AuditScope {
  std::string only_namespace;  // "": all
  // A workload kind the caller may not list (403) is skipped and reported here; null: it is an error.
  std::function<void(const cluster::ServedKind&, const std::string& why)> on_forbidden;
  // Asked between objects; false stops the audit with an error (serve: this replica lost the lease).
  std::function<bool()> keep_going;
};
Result<admission::Audit> audit_cluster(cluster::ApiTransport& transport, const policy::PolicySet& policies,
                                       const policy::ClusterView& view, const AuditScope& scope,
                                       std::stop_token stop = {});

}  // namespace gpuadmit::cli
