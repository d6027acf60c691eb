#include "gpuadmit/cli/serve_cluster_view.hpp"

#include <cstdlib>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/metrics_text.hpp"
#include "gpuadmit/cluster/unlisted_gpus.hpp"

namespace gpuadmit::cli {
namespace {

class WatcherView final : public server::ClusterViewProvider {
 public:
  WatcherView(std::shared_ptr<cluster::ApiTransport> transport, cluster::WatcherOptions options)
      : unlisted_(options.log ? options.log : cluster::null_sink()),
        watcher_(std::move(transport), reporting(std::move(options))) {}

  void start(Rules rules) override {
    rules_ = std::move(rules);  // before the watcher's threads, which read it
    watcher_.start();
  }
  void stop() override { watcher_.stop(); }
  [[nodiscard]] bool synced() const override { return watcher_.synced(); }
  [[nodiscard]] policy::ClusterView view() const override { return watcher_.view(); }
  [[nodiscard]] std::string metrics_text() const override {
    // Compared again here too: a policy reload changes what is unlisted without any rebuild.
    if (const auto rules = rules_ ? rules_() : nullptr; rules && watcher_.synced())
      unlisted_.update(*watcher_.view().snapshot, *rules);
    return cluster::prometheus_text(watcher_.stats()) + unlisted_.prometheus_text();
  }

 private:
  cluster::WatcherOptions reporting(cluster::WatcherOptions options) {
    options.on_rebuilt = [this](const policy::ClusterSnapshot& snapshot) {
      if (const auto rules = rules_ ? rules_() : nullptr) unlisted_.update(snapshot, *rules);
    };
    return options;
  }

  Rules rules_;
  mutable cluster::UnlistedGpuReport unlisted_;  // thread-safe
  cluster::ClusterWatcher watcher_;              // last: its threads stop before the members they use go
};

}  // namespace

std::optional<std::string> environment_value(const std::map<std::string, std::string>* env,
                                             const std::string& name) {
  if (env != nullptr) {
    const auto it = env->find(name);
    return it == env->end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): start-up, one thread
  return value == nullptr ? std::nullopt : std::optional<std::string>(value);
}

bool in_cluster(const std::map<std::string, std::string>* env) {
  return environment_value(env, "KUBERNETES_SERVICE_HOST").has_value();
}

TransportFactory api_transport_factory(const ClusterViewFlags& flags,
                                       const std::map<std::string, std::string>* env,
                                       const cluster::InClusterPaths& paths, std::string what) {
  // Copies: the factory runs later, after the flags are gone.
  std::optional<std::map<std::string, std::string>> env_copy;
  if (env != nullptr) env_copy = *env;
  return
      [flags, env_copy, paths, what = std::move(what)]() -> Result<std::shared_ptr<cluster::ApiTransport>> {
        auto config = flags.kubeconfig ? cluster::load_kubeconfig(*flags.kubeconfig, flags.context)
                                       : cluster::in_cluster_config(paths, env_copy ? &*env_copy : nullptr);
        if (!config) return make_error(what + ": " + config.error().message);
        // The webhook's verdicts rest on what it reads: a view anyone on the path could forge is refused.
        if (config->insecure_skip_tls_verify) {
          return make_error(what + ": " + config->source +
                            " has insecure-skip-tls-verify; serve needs the API server verified (give its "
                            "certificate-authority)");
        }
        auto transport = cluster::make_https_transport(std::move(*config));
        if (!transport) return make_error(what + ": " + transport.error().message);
        return std::move(*transport);
      };
}

cluster::LogSink json_log_sink(const server::JsonLog& log) {
  return [log](spdlog::level::level_enum level, std::string_view msg, const cluster::LogFields& fields) {
    log.log(level, msg, fields);
  };
}

std::unique_ptr<server::ClusterViewProvider> make_watcher_view(
    std::shared_ptr<cluster::ApiTransport> transport, cluster::WatcherOptions options) {
  return std::make_unique<WatcherView>(std::move(transport), std::move(options));
}

Result<server::ClusterViewSetup> cluster_view_setup(const ClusterViewFlags& flags,
                                                    const std::map<std::string, std::string>* env,
                                                    const cluster::InClusterPaths& paths) {
  server::ClusterViewSetup setup;
  if (flags.mode != "auto" && flags.mode != "on" && flags.mode != "off") {
    return make_error("--cluster-view must be auto, on or off, not \"" + flags.mode + "\"");
  }
  if (flags.mode == "off") {
    if (flags.kubeconfig) return make_error("--kubeconfig makes no sense with --cluster-view=off");
    setup.off_reason = "--cluster-view=off";
    return setup;
  }
  if (!flags.kubeconfig && !in_cluster(env)) {
    if (flags.mode == "on") {
      return make_error("--cluster-view=on needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
    }
    setup.off_reason = "no --kubeconfig and not in a cluster (KUBERNETES_SERVICE_HOST is not set)";
    return setup;
  }
  if (!flags.context.empty() && !flags.kubeconfig) return make_error("--context needs --kubeconfig");
  setup.source = flags.kubeconfig ? "kubeconfig " + *flags.kubeconfig : "in-cluster";
  setup.make = [connect = api_transport_factory(flags, env, paths, "cluster view")](
                   const server::JsonLog& log) -> Result<std::unique_ptr<server::ClusterViewProvider>> {
    auto transport = connect();
    if (!transport) return transport.error();
    cluster::WatcherOptions options;
    options.log = json_log_sink(log);
    return make_watcher_view(std::move(*transport), std::move(options));
  };
  return setup;
}

}  // namespace gpuadmit::cli
