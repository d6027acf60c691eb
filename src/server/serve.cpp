#include "gpuadmit/server/serve.hpp"
#include "gpuadmit/server/cpu_quota.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <functional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "gpuadmit/common/text.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "gpuadmit/server/allocator.hpp"
#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/serve_policy_objects.hpp"
#include "gpuadmit/server/serve_renewal.hpp"
#include "gpuadmit/server/webhook.hpp"
#include "gpuadmit/version.hpp"

namespace gpuadmit::server {
namespace {

namespace net = boost::asio;

constexpr std::string_view kSampleReview = "deploy/examples/admission-review-gpu-pod.json";

// A directory that is removed when serve exits (dev mode's certificates).
class TemporaryDirectory {
 public:
  static Result<TemporaryDirectory> create() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpuadmit-dev-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) return make_error("cannot create a temporary directory");
    return TemporaryDirectory(pattern);
  }
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

// Where this process reaches its own listener: loopback for a wildcard address.
std::string local_url_host(const ListenAddress& listen) {
  if (listen.host.empty() || listen.host == "0.0.0.0") return "127.0.0.1";
  if (listen.host == "::") return "[::1]";
  return url_host(listen.host);
}

struct DevCertificates {
  TlsFiles files;
  std::filesystem::path ca_file;
  std::string ca_pem;
};

// Dev mode: a fresh CA and serving certificate for the names a local client uses.
Result<DevCertificates> generate_dev_certificates(const TemporaryDirectory& directory,
                                                  const ListenAddress& listen, const JsonLog& log) {
  ServingSpec spec{{"localhost"}, {"127.0.0.1", "::1"}, 30, {}};
  if (!listen.host.empty() && listen.host != "0.0.0.0" && listen.host != "::") {
    auto& names = listen.host.find_first_not_of("0123456789.:abcdefABCDEF") == std::string::npos
                      ? spec.ip_addresses
                      : spec.dns_names;
    if (std::find(names.begin(), names.end(), listen.host) == names.end()) names.push_back(listen.host);
  }
  auto ca = generate_ca(CaSpec{"gpuadmit-dev-ca", 30});
  if (!ca) return ca.error();
  auto serving = generate_serving_certificate(*ca, spec);
  if (!serving) return serving.error();
  auto files = write_certificate_files(directory.path(), ca->certificate, *serving);
  if (!files) return files.error();
  log.info("dev certificates generated",
           {{"dir", directory.path().string()}, {"dns", spec.dns_names}, {"ip", spec.ip_addresses}});
  return DevCertificates{{files->certificate, files->private_key, std::nullopt}, files->ca, ca->certificate};
}

// What a person needs to try the dev server: the caBundle for a webhook configuration and a curl line that
// posts a sample review. On stderr: stdout carries JSON log lines only.
void print_dev_banner(const DevCertificates& dev, const std::filesystem::path& directory,
                      const ListenAddress& listen, std::uint16_t port) {
  const std::string sample = std::filesystem::exists(kSampleReview)
                                 ? std::filesystem::absolute(kSampleReview).string()
                                 : std::string(kSampleReview);
  const std::string base = "https://" + local_url_host(listen) + ":" + std::to_string(port);
  std::fprintf(stderr,
               "\ngpuadmit dev mode: self-signed certificates in %s (removed on exit)\n\n"
               "caBundle (base64 of ca.crt, for a webhook clientConfig):\n%s\n\n"
               "Try it:\n  curl --cacert %s -H 'Content-Type: application/json' --data-binary @%s %s/mutate\n"
               "  curl --cacert %s %s/metrics\n\n"
               "Ctrl-C drains for the drain period (--drain-seconds), a second Ctrl-C stops at once.\n\n",
               directory.c_str(), ca_bundle(dev.ca_pem).c_str(), dev.ca_file.c_str(), sample.c_str(),
               base.c_str(), dev.ca_file.c_str(), base.c_str());
}

Result<TlsFiles> tls_files(const ServeOptions& options) {
  if (!options.cert_dir.empty()) {
    return TlsFiles{std::filesystem::path(options.cert_dir) / "tls.crt",
                    std::filesystem::path(options.cert_dir) / "tls.key", std::nullopt};
  }
  if (options.tls_cert_file.empty() || options.tls_private_key_file.empty()) {
    return make_error(
        "no serving certificate: give --cert-dir, or --tls-cert-file and --tls-private-key-file, "
        "or --dev-self-signed");
  }
  return TlsFiles{options.tls_cert_file, options.tls_private_key_file, std::nullopt};
}

std::string level_name(spdlog::level::level_enum level) {
  const auto name = spdlog::level::to_string_view(level);
  return std::string(name.data(), name.size());
}

LogFields startup_line(const ServeOptions& options, const WebhookConfig& config, const Webhook& webhook,
                       unsigned threads) {
  const ClusterViewSetup& cluster = options.cluster_view;
  return {
      {"version", kVersion},
      {"listen", config.server.host + ":" + std::to_string(webhook.port())},
      {"tls_cert_file", config.tls.certificate.string()},
      {"tls_private_key_file", config.tls.private_key.string()},
      {"policy", webhook.policy().source()},
      {"client_ca_file", config.tls.client_ca ? config.tls.client_ca->string() : std::string("off")},
      {"metrics_listen", config.metrics_server
                             ? config.metrics_server->host + ":" + std::to_string(webhook.metrics_port())
                             : std::string("off (on the main port)")},
      {"threads", threads},
      {"drain_seconds", options.drain.count()},
      {"max_connections", options.max_connections},
      {"idle_timeout_s", config.server.limits.idle_timeout.count() / 1000},
      {"body_limit_bytes", config.server.limits.body_limit},
      {"log_level", level_name(options.log_level)},
      {"cluster_view", cluster.make ? cluster.source : "off (" + cluster.off_reason + ")"},
      {"policy_objects",
       options.policy_objects.make
           ? "ClusterGPUPolicy/" + options.policy_objects.cluster_policy_name + " and namespaces' GPUPolicies"
           : std::string("off")},
      {"certificate_renewal", options.renewal.make ? std::string("on") : std::string("off")},
      {"background_audit", options.audit.make ? "every " + std::to_string(options.audit.interval.count()) +
                                                    "s, Lease " + options.audit.lease
                                              : std::string("off")},
      {"certificate", describe_certificate(*webhook.tls().current())}};
}

// The serving certificate's files: the ones given, or in dev mode ones generated into a directory that is
// removed when this is.
struct ServingTls {
  std::optional<TemporaryDirectory> dev_directory;
  std::optional<DevCertificates> dev;
  TlsFiles files;
};

Result<ServingTls> serving_tls(const ServeOptions& options, const ListenAddress& listen, const JsonLog& log) {
  ServingTls out;
  if (!options.dev_self_signed) {
    auto files = tls_files(options);
    if (!files) return files.error();
    out.files = std::move(*files);
    return out;
  }
  auto directory = TemporaryDirectory::create();
  if (!directory) return directory.error();
  out.dev_directory.emplace(std::move(*directory));
  auto generated = generate_dev_certificates(*out.dev_directory, listen, log);
  if (!generated) return generated.error();
  out.dev = std::move(*generated);
  out.files = out.dev->files;
  return out;
}

// --client-ca-file and --metrics-listen, onto the config.
Result<bool> caller_options(const ServeOptions& options, WebhookConfig& config) {
  if (!options.client_ca_file.empty()) config.tls.client_ca = options.client_ca_file;
  if (options.metrics_listen.empty()) return true;
  auto address = parse_listen_address(options.metrics_listen);
  if (!address) return make_error("--metrics-listen: " + address.error().message);
  ServerConfig metrics = config.server;
  metrics.host = address->host;
  metrics.port = address->port;
  metrics.threads = 1;  // a scrape every few seconds
  config.metrics_server = metrics;
  return true;
}

WebhookConfig webhook_config(const ServeOptions& options, const ListenAddress& listen,
                             const TlsFiles& files) {
  WebhookConfig config;
  config.server.host = listen.host;
  config.server.port = listen.port;
  config.server.threads = options.threads;
  config.server.drain_period = options.drain;
  config.server.limits.max_connections = options.max_connections;
  config.tls = files;
  if (!options.policy_file.empty()) config.policy_file = options.policy_file;
  return config;
}

// The cluster view, attached to `config` for the webhook's handlers to read; null (and logged) when it is
// off.
Result<std::unique_ptr<ClusterViewProvider>> cluster_view(const ServeOptions& options, const JsonLog& log,
                                                          WebhookConfig& config) {
  if (!options.cluster_view.make) {
    log.info(
        "cluster view off: the cluster-aware rules (" + policy::cluster_aware_rule_list() + ") are skipped",
        {{"reason", options.cluster_view.off_reason}});
    return std::unique_ptr<ClusterViewProvider>();
  }
  auto made = options.cluster_view.make(log);
  if (!made) return made.error();
  attach_cluster_view(config, **made);
  return std::move(*made);
}

// The background audit, its series appended to /metrics after the cluster view's; null when it is off.
Result<std::unique_ptr<BackgroundAudit>> background_audit(const ServeOptions& options, const JsonLog& log,
                                                          const ClusterViewProvider* cluster,
                                                          WebhookConfig& config) {
  if (!options.audit.make) return std::unique_ptr<BackgroundAudit>();
  if (cluster == nullptr) return make_error("the background audit (--audit-interval) needs the cluster view");
  auto made = options.audit.make(log, *cluster);
  if (!made) return made.error();
  config.extra_metrics = [before = config.extra_metrics, audit = made->get()] {
    return (before ? before() : std::string()) + audit->metrics_text();
  };
  return std::move(*made);
}

// Runs the webhook (and the cluster view's watch, when there is one) until it stops: SIGHUP checks the
// files again, SIGTERM or SIGINT drains, a second SIGINT stops at once. Signals are handled on this thread's
// own io_context; the server's threads never see them.
void serve_until_stopped(Webhook& webhook, ClusterViewProvider* cluster, PolicyObjectSource* policy_source,
                         BackgroundAudit* audit, const std::string& cluster_policy_name, const JsonLog& log) {
  net::io_context signals_context;
  net::signal_set signals(signals_context, SIGTERM, SIGINT, SIGHUP);
  bool shutting_down = false;
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int number) {
        if (ec) return;
        if (number == SIGHUP) {
          log.info("SIGHUP: checking the certificate and policy files");
          webhook.check_files_now();
        } else if (!shutting_down) {
          shutting_down = true;
          log.info("termination signal: draining", {{"signal", number == SIGTERM ? "SIGTERM" : "SIGINT"}});
          webhook.begin_shutdown();
        } else if (number == SIGINT) {
          log.warn("second SIGINT: stopping now");
          webhook.stop_now();
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);

  // Memory freed after a burst (connections, a relist of a large cluster) goes back to the system within
  // kReleaseInterval instead of staying in the allocator for the life of the process (allocator.hpp).
  net::steady_timer release_timer(signals_context);
  std::function<void(const boost::system::error_code&)> on_release_tick =
      [&](const boost::system::error_code& ec) {
        if (ec) return;
        const AllocatorStats before = allocator_stats();
        if (should_release(before)) {
          release_free_memory();
          log.info("free memory given back to the system", {{"allocator", std::string(before.allocator)},
                                                            {"free_bytes", before.free},
                                                            {"free_bytes_after", allocator_stats().free},
                                                            {"in_use_bytes", before.in_use}});
        }
        release_timer.expires_after(kReleaseInterval);
        release_timer.async_wait(on_release_tick);
      };
  release_timer.expires_after(kReleaseInterval);
  release_timer.async_wait(on_release_tick);

  // The watch starts before the listener: /readyz answers "cluster view synced: not yet" until it is.
  if (cluster != nullptr) cluster->start([&webhook] { return webhook.policy().current(); });
  if (policy_source != nullptr)
    policy_source->start(on_policy_objects(webhook, *policy_source, cluster_policy_name, log));
  webhook.start();
  if (audit != nullptr) audit->start([&webhook] { return webhook.policy().policies(); });
  std::thread waiter([&] {
    const bool clean = webhook.wait();
    log.info("stopped", {{"clean", clean}});
    net::post(signals_context, [&] { signals_context.stop(); });
  });
  signals_context.run();
  waiter.join();
  if (audit != nullptr) audit->stop();
  if (policy_source != nullptr) policy_source->stop();
  if (cluster != nullptr) cluster->stop();
}

}  // namespace

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return make_error("--listen wants HOST:PORT, got \"" + std::string(text) + "\"");
  std::string host(text.substr(0, colon));
  const std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.find(':') != std::string::npos && text.front() != '[') {
    return make_error("--listen: write IPv6 addresses in brackets, e.g. [::1]:8443");
  }
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty()) {
    return make_error("--listen: invalid port \"" + std::string(port_text) + "\"");
  }
  return ListenAddress{host.empty() ? "0.0.0.0" : host, static_cast<std::uint16_t>(port)};
}

int run_serve(const ServeOptions& options) {
  // A log reader that goes away must not kill the webhook; sockets already write with MSG_NOSIGNAL.
  std::signal(SIGPIPE, SIG_IGN);
  const JsonLog log = JsonLog::to_stdout(options.log_level);
  const auto fail = [&](const std::string& message) {
    log.error("cannot start", {{"error", message}});
    return 2;
  };
  auto listen = parse_listen_address(options.listen);
  if (!listen) return fail(listen.error().message);
  auto tls = serving_tls(options, *listen, log);
  if (!tls) return fail(tls.error().message);
  WebhookConfig config = webhook_config(options, *listen, tls->files);
  if (auto callers = caller_options(options, config); !callers) return fail(callers.error().message);
  // Declared before the webhook, so it is destroyed after it: the webhook's handlers read it.
  auto cluster = cluster_view(options, log, config);
  if (!cluster) return fail(cluster.error().message);
  auto policy_source = policy_objects(options, log, config);
  if (!policy_source) return fail(policy_source.error().message);
  auto audit = background_audit(options, log, cluster->get(), config);
  if (!audit) return fail(audit.error().message);

  auto webhook = Webhook::create(config, log);
  if (!webhook) return fail(webhook.error().message);
  const unsigned threads = options.threads > 0 ? options.threads : usable_cpus();
  log.info("serving", startup_line(options, config, **webhook, threads));
  if (tls->dev) print_dev_banner(*tls->dev, tls->dev_directory->path(), *listen, (*webhook)->port());
  auto renewal = start_renewal(options.renewal, **webhook, log);
  if (!renewal) return fail(renewal.error().message);
  serve_until_stopped(**webhook, cluster->get(), policy_source->get(), audit->get(),
                      options.policy_objects.cluster_policy_name, log);
  return 0;
}

}  // namespace gpuadmit::server
