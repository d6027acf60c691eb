#include "gpuadmit/server/webhook.hpp"

#include "gpuadmit/version.hpp"
#include "poller.hpp"

namespace gpuadmit::server {
namespace {

void record(const JsonLog& log, Family<Counter>& counter, std::string_view what, const ReloadReport& report) {
  switch (report.status) {
    case ReloadStatus::kUnchanged:
      return;
    case ReloadStatus::kReloaded:
      counter.with({std::string(kReloadSuccess)}).inc();
      log.info(std::string(what) + " reloaded", {{"in_use", report.detail}});
      return;
    case ReloadStatus::kFailed:
      counter.with({std::string(kReloadFailure)}).inc();
      log.error(std::string(what) + " reload rejected; keeping the previous one", {{"error", report.error}});
      return;
  }
}

}  // namespace

Result<std::unique_ptr<Webhook>> Webhook::create(WebhookConfig config, JsonLog log) {
  auto tls = TlsContextStore::open(config.tls);
  if (!tls) return tls.error();
  auto policy = PolicyStore::open(config.policy_file);
  if (const std::string reason = policy->unloaded_reason(); !reason.empty()) {
    // Started after a bad edit: not ready rather than crash-looping, and never on another policy.
    log.error("policy file invalid; this replica serves no review until it is fixed (the others keep theirs)",
              {{"error", reason}});
  }
  auto webhook = std::unique_ptr<Webhook>(
      new Webhook(std::move(config), std::move(log), std::move(*tls), std::move(policy)));
  auto server = Server::bind(webhook->config_.server, webhook->router_, *webhook->tls_, webhook->metrics_,
                             webhook->readiness_, webhook->log_);
  if (!server) return server.error();
  webhook->server_ = std::move(*server);
  if (webhook->config_.metrics_server) {
    ServerConfig metrics = *webhook->config_.metrics_server;
    metrics.ask_client_certificate = false;
    auto bound = Server::bind(metrics, webhook->metrics_router_, *webhook->tls_, webhook->metrics_,
                              webhook->readiness_, webhook->log_);
    if (!bound) return make_error("--metrics-listen: " + bound.error().message);
    webhook->metrics_server_ = std::move(*bound);
  }
  return webhook;
}

namespace {

// The serving certificate in use (the newest valid pair) and when it expires, so an alert can fire well
// before a certificate nobody renewed stops every review.
std::string certificate_expiry_metric(const TlsContextStore& tls) {
  const auto context = tls.current();
  const auto not_after = context ? certificate_not_after(*context) : std::nullopt;
  if (!not_after) return {};
  return "# HELP gpuadmit_certificate_expiry_timestamp_seconds When the serving certificate in use expires "
         "(notAfter, seconds since the Unix epoch).\n"
         "# TYPE gpuadmit_certificate_expiry_timestamp_seconds gauge\n"
         "gpuadmit_certificate_expiry_timestamp_seconds " +
         std::to_string(*not_after) + "\n";
}

}  // namespace

Webhook::Webhook(WebhookConfig config, JsonLog log, std::unique_ptr<TlsContextStore> tls,
                 std::unique_ptr<PolicyStore> policy)
    : config_(std::move(config)),
      log_(std::move(log)),
      metrics_(kVersion),
      tls_(std::move(tls)),
      policy_(std::move(policy)) {
  readiness_.add_check("policy", [store = policy_.get()] { return store->unloaded_reason(); });
  // The alert fires for as long as the refused version is the mounted one, a start on it included.
  metrics_.policy_file_rejected.with({}).set(policy_->unloaded_reason().empty() ? 0 : 1);
  for (auto& [name, is_met] : config_.readiness_conditions) readiness_.add_condition(name, is_met);
  const ReviewFunction review = [](std::string_view body, admission::Endpoint endpoint,
                                   const policy::PolicySet& policies, const policy::ClusterView* cluster,
                                   const admission::PolicyObjectCheck& check, policy::ReviewBudget& budget) {
    return admission::review(body, endpoint, policies, cluster, check, &budget);
  };
  const ReviewDependencies deps{*policy_, metrics_, log_, review, config_.cluster_view};
  std::function<std::string()> extra_metrics = [tls = tls_.get(), extra = config_.extra_metrics] {
    return certificate_expiry_metric(*tls) + (extra ? extra() : std::string());
  };
  router_ = make_router(
      deps, readiness_,
      RouterOptions{extra_metrics, config_.tls.client_ca.has_value(), !config_.metrics_server.has_value()});
  if (config_.metrics_server)
    metrics_router_ = make_metrics_router(deps, readiness_, std::move(extra_metrics));
}

void Webhook::begin_shutdown() {
  server_->begin_shutdown();
  if (metrics_server_) metrics_server_->begin_shutdown();
}

void Webhook::stop_now() {
  server_->stop_now();
  if (metrics_server_) metrics_server_->stop_now();
}

Webhook::~Webhook() {
  poller_.reset();
  server_.reset();
  metrics_server_.reset();
}

void Webhook::start() {
  server_->start();
  if (metrics_server_) metrics_server_->start();
  poller_ = std::make_unique<Poller>(config_.reload_interval, [this] { check_files_now(); });
}

bool Webhook::wait() {
  const bool clean = server_->wait();
  if (metrics_server_) {
    metrics_server_->stop_now();  // metrics outlast the reviews by no more than this
    metrics_server_->wait();
  }
  poller_.reset();
  return clean;
}

FileChecks Webhook::check_files_now() {
  FileChecks checks{tls_->reload_if_changed(), policy_->reload_if_changed()};
  record(log_, metrics_.tls_reloads, "serving certificate", checks.tls);
  record(log_, metrics_.policy_reloads, "policy", checks.policy);
  // Kept until the file changes again: the alert fires for as long as the refused version is mounted.
  if (checks.policy.status != ReloadStatus::kUnchanged)
    metrics_.policy_file_rejected.with({}).set(checks.policy.status == ReloadStatus::kFailed ? 1 : 0);
  return checks;
}

}  // namespace gpuadmit::server
