// The composition root's half of the cluster view for `gpuadmit serve`: which API server to watch (flags
// and environment → ClusterViewSetup) and the adapter from cluster::ClusterWatcher to the server's
// ClusterViewProvider seam.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/background_audit.hpp"
#include "gpuadmit/server/certificate_renewer.hpp"
#include "gpuadmit/server/cluster_view.hpp"
#include "gpuadmit/server/policy_object_source.hpp"

namespace gpuadmit::cli {

// What the serve flags say about the cluster view.
struct ClusterViewFlags {
  std::string mode = "auto";              // --cluster-view: auto, on or off
  std::optional<std::string> kubeconfig;  // --kubeconfig FILE
  std::string context;                    // --context NAME
};

// auto: --kubeconfig if given, else in-cluster when KUBERNETES_SERVICE_HOST is set (read from `env`, the
// process environment when null), else off. on: the same, but no configuration is an error. off: off.
// $KUBECONFIG is deliberately not consulted: a server should not pick up a developer's cluster by accident.
// The returned setup loads the configuration only when serve calls `make`, so a bad kubeconfig is a
// start-up error in the JSON log (exit 2).
Result<server::ClusterViewSetup> cluster_view_setup(const ClusterViewFlags& flags,
                                                    const std::map<std::string, std::string>* env = nullptr,
                                                    const cluster::InClusterPaths& paths = {});

// How serve reaches the API server, made when serve starts: from --kubeconfig, else in-cluster (the service
// account, `env` and `paths` as for cluster_view_setup). Errors start with `what` ("cluster view: ...").
using TransportFactory = std::function<Result<std::shared_ptr<cluster::ApiTransport>>()>;
TransportFactory api_transport_factory(const ClusterViewFlags& flags,
                                       const std::map<std::string, std::string>* env,
                                       const cluster::InClusterPaths& paths, std::string what);
// The variable `name` of `env`, the process environment when null.
std::optional<std::string> environment_value(const std::map<std::string, std::string>* env,
                                             const std::string& name);

// Whether serve runs in a pod (KUBERNETES_SERVICE_HOST in `env`, the process environment when null).
bool in_cluster(const std::map<std::string, std::string>* env);

// --policy-objects: a cluster::PolicyObjectWatch behind the server's seam, on the API server the cluster view
// would use (--kubeconfig, else in-cluster; either is required). Off (`enabled` false): an empty setup.
Result<server::PolicyObjectSetup> policy_objects_setup(
    bool enabled, std::string cluster_policy_name, const ClusterViewFlags& flags,
    const std::map<std::string, std::string>* env = nullptr, const cluster::InClusterPaths& paths = {});

// --renew-secret NAMESPACE/NAME [--renew-before DURATION]: the TLS Secret read and patched on the API server
// the cluster view would use (--kubeconfig, else in-cluster; either is required). Off: an empty setup.
Result<server::RenewalSetup> renewal_setup(const std::optional<std::string>& secret,
                                           const std::optional<std::string>& renew_before,
                                           const ClusterViewFlags& flags,
                                           const std::map<std::string, std::string>* env = nullptr,
                                           const cluster::InClusterPaths& paths = {});

// A namespace, Secret or Lease name as the API server allows them (DNS-1123 subdomain), so that a flag
// cannot make a request path say something else.
bool object_name(std::string_view text);

// --audit-interval DURATION [--audit-lease NAMESPACE/NAME]: the background audit on the API server the
// cluster view uses. The Lease defaults to $POD_NAMESPACE/gpuadmit-audit; the replica's identity is
// $POD_NAME, else the host name. Off (no interval): an empty setup.
Result<server::BackgroundAuditSetup> audit_setup(const std::optional<std::string>& interval,
                                                 const std::optional<std::string>& lease,
                                                 const ClusterViewFlags& flags,
                                                 const std::map<std::string, std::string>* env = nullptr,
                                                 const cluster::InClusterPaths& paths = {});

// A ClusterWatcher over `transport` behind the server's seam. `options.log` is used as given.
std::unique_ptr<server::ClusterViewProvider> make_watcher_view(
    std::shared_ptr<cluster::ApiTransport> transport, cluster::WatcherOptions options);

// Forwards the cluster layer's log lines to the server's JSON log.
cluster::LogSink json_log_sink(const server::JsonLog& log);

}  // namespace gpuadmit::cli
