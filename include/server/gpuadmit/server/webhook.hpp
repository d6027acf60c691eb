// The webhook assembled: serving certificate and policy (both reloaded when their files change), metrics,
// readiness, router and HTTPS server. `gpuadmit serve` runs one; the integration tests and the load
// benchmark run one in-process on 127.0.0.1:0.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/handlers.hpp"
#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "gpuadmit/server/policy_store.hpp"
#include "gpuadmit/server/readiness.hpp"
#include "gpuadmit/server/reload.hpp"
#include "gpuadmit/server/server.hpp"
#include "gpuadmit/server/tls_context.hpp"

namespace gpuadmit::server {

class Poller;

struct WebhookConfig {
  ServerConfig server;
  TlsFiles tls;
  std::optional<std::filesystem::path> policy_file;  // none: the embedded default policy
  // controller-runtime's certwatcher polls every 10 s; the kubelet itself takes up to a minute to swap.
  std::chrono::milliseconds reload_interval{2'000};
  // Where the cluster-aware rules get their view (the cluster watcher's snapshot store); empty: none.
  ClusterViewSource cluster_view;
  // More /readyz conditions besides "policy" (a valid policy in force), e.g. {"cluster view synced", [&] {
  // return ...; }}.
  std::vector<std::pair<std::string, std::function<bool()>>> readiness_conditions;
  // More Prometheus text appended to /metrics on each scrape (the cluster view's series); empty: none.
  std::function<std::string()> extra_metrics;
  // --metrics-listen: /metrics (and /healthz, /readyz) on a port of their own, over TLS with the same
  // certificate but never asking for a client certificate; the main port then has no /metrics.
  std::optional<ServerConfig> metrics_server;
};

struct FileChecks {
  ReloadReport tls;
  ReloadReport policy;
};

class Webhook {
 public:
  static Result<std::unique_ptr<Webhook>> create(WebhookConfig config, JsonLog log);
  Webhook(const Webhook&) = delete;
  Webhook& operator=(const Webhook&) = delete;
  Webhook(Webhook&&) = delete;
  Webhook& operator=(Webhook&&) = delete;
  ~Webhook();

  [[nodiscard]] std::uint16_t port() const noexcept { return server_->port(); }
  // The --metrics-listen port (0 without one).
  [[nodiscard]] std::uint16_t metrics_port() const noexcept {
    return metrics_server_ ? metrics_server_->port() : 0;
  }

  // Starts serving and the file watcher.
  void start();
  // SIGTERM: see Server::begin_shutdown.
  void begin_shutdown();
  // Second SIGINT, or a test tearing down.
  void stop_now();
  // Blocks until stopped; false when the shutdown grace ran out with connections still open.
  bool wait();

  // Re-reads the certificate pair and the policy now, logs and counts the outcome (SIGHUP, the poller).
  FileChecks check_files_now();
  // Serves a renewed pair from the next handshake on (serve --renew-secret).
  ReloadReport install_serving_certificate(const PemPair& serving) {
    return tls_->install(serving.certificate, serving.private_key);
  }

  [[nodiscard]] const Metrics& metrics() const noexcept { return metrics_; }
  [[nodiscard]] Metrics& metrics() noexcept { return metrics_; }
  [[nodiscard]] const Readiness& readiness() const noexcept { return readiness_; }
  [[nodiscard]] const PolicyStore& policy() const noexcept { return *policy_; }
  [[nodiscard]] PolicyStore& policy() noexcept { return *policy_; }
  [[nodiscard]] const TlsContextStore& tls() const noexcept { return *tls_; }

 private:
  Webhook(WebhookConfig config, JsonLog log, std::unique_ptr<TlsContextStore> tls,
          std::unique_ptr<PolicyStore> policy);

  WebhookConfig config_;
  JsonLog log_;
  Metrics metrics_;
  Readiness readiness_;
  std::unique_ptr<TlsContextStore> tls_;
  std::unique_ptr<PolicyStore> policy_;
  Router router_;
  Router metrics_router_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Server> metrics_server_;
  std::unique_ptr<Poller> poller_;  // last: stopped first, before what it checks
};

}  // namespace gpuadmit::server
