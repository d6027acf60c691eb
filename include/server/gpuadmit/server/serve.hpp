// `gpuadmit serve`: options as the command line gives them, and the run loop with signals.
//   SIGTERM, SIGINT: graceful drain and exit 0 (a second SIGINT stops at once).
//   SIGHUP: re-read the serving certificate and the policy now.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <spdlog/common.h>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/background_audit.hpp"
#include "gpuadmit/server/certificate_renewer.hpp"
#include "gpuadmit/server/cluster_view.hpp"
#include "gpuadmit/server/policy_object_source.hpp"
#include "gpuadmit/server/server.hpp"

namespace gpuadmit::server {

struct ServeOptions {
  std::string listen = "0.0.0.0:8443";
  std::string tls_cert_file;
  std::string tls_private_key_file;
  std::string cert_dir;     // tls.crt and tls.key inside, as a kubernetes.io/tls Secret mounts them
  std::string policy_file;  // empty: the embedded default policy
  unsigned threads = 0;     // 0: one per core
  std::chrono::seconds drain{5};
  std::size_t max_connections = ConnectionLimits{}.max_connections;
  spdlog::level::level_enum log_level = spdlog::level::info;
  bool dev_self_signed = false;  // generate a CA and serving certificate in a temporary directory
  // Only callers with a certificate from these CAs get a review (401 otherwise); empty: anyone.
  std::string client_ca_file;
  // "HOST:PORT": /metrics there, not on `listen`; empty: on `listen`.
  std::string metrics_listen;
  // The live cluster view (docs/cluster.md): started before serving, /readyz waits for its first sync, each
  // review reads the snapshot current when it arrived, its series join /metrics, stopped after the drain.
  ClusterViewSetup cluster_view;
  // --policy-objects: the ClusterGPUPolicy named cluster_policy_name (over policy_file) and the namespaces'
  // GPUPolicies are the policies in force; /readyz waits for their first list.
  PolicyObjectSetup policy_objects;
  // --renew-secret: the serving certificate renewed from the CA in that Secret (certificate_renewer.hpp).
  RenewalSetup renewal;
  // --audit-interval: the background audit (background_audit.hpp); needs the cluster view.
  BackgroundAuditSetup audit;
};

struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
};

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (all interfaces).
Result<ListenAddress> parse_listen_address(std::string_view text);

// Runs until a termination signal has drained the server. Returns the process exit code: 0 after a
// signalled stop, 2 when start-up fails (bad certificate, policy or address; the reason is logged).
int run_serve(const ServeOptions& options);

}  // namespace gpuadmit::server
