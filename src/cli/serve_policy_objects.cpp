// The composition root's half of --policy-objects: which API server, and cluster::PolicyObjectWatch behind
// server::PolicyObjectSource.
#include <cstdlib>

#include "gpuadmit/cli/serve_cluster_view.hpp"
#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/policy_objects.hpp"

namespace gpuadmit::cli {
namespace {

class WatchedPolicyObjects final : public server::PolicyObjectSource {
 public:
  WatchedPolicyObjects(std::shared_ptr<cluster::ApiTransport> transport, cluster::LogSink log)
      : transport_(std::move(transport)), log_(std::move(log)) {}
  ~WatchedPolicyObjects() override { WatchedPolicyObjects::stop(); }
  WatchedPolicyObjects(const WatchedPolicyObjects&) = delete;
  WatchedPolicyObjects& operator=(const WatchedPolicyObjects&) = delete;
  WatchedPolicyObjects(WatchedPolicyObjects&&) = delete;
  WatchedPolicyObjects& operator=(WatchedPolicyObjects&&) = delete;

  void start(OnChange on_change) override {
    cluster::PolicyWatchOptions options;
    options.log = log_;
    watch_ = std::make_unique<cluster::PolicyObjectWatch>(
        transport_,
        [on_change = std::move(on_change)](const cluster::PolicyObjects& objects) {
          on_change(objects.cluster, objects.namespaced);
        },
        std::move(options));
    watch_->start();
  }
  void stop() override {
    if (watch_) watch_->stop();
  }
  [[nodiscard]] bool listed() const override { return watch_ && watch_->listed(); }
  Result<bool> write_status(const nlohmann::json& object, const nlohmann::json& status) override {
    if (!watch_) return make_error("not started");
    return watch_->patch_status(object, status);
  }

 private:
  std::shared_ptr<cluster::ApiTransport> transport_;
  cluster::LogSink log_;
  std::unique_ptr<cluster::PolicyObjectWatch> watch_;
};

}  // namespace

Result<server::PolicyObjectSetup> policy_objects_setup(bool enabled, std::string cluster_policy_name,
                                                       const ClusterViewFlags& flags,
                                                       const std::map<std::string, std::string>* env,
                                                       const cluster::InClusterPaths& paths) {
  server::PolicyObjectSetup setup;
  if (cluster_policy_name.empty()) return make_error("--cluster-policy-name must not be empty");
  setup.cluster_policy_name = std::move(cluster_policy_name);
  if (!enabled) return setup;
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");  // NOLINT(concurrency-mt-unsafe): start-up
  const bool in_cluster = env != nullptr ? env->count("KUBERNETES_SERVICE_HOST") > 0 : host != nullptr;
  if (!flags.kubeconfig && !in_cluster) {
    return make_error("--policy-objects needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
  }
  std::optional<std::map<std::string, std::string>> env_copy;
  if (env != nullptr) env_copy = *env;
  setup.make = [flags, env_copy,
                paths](const server::JsonLog& log) -> Result<std::unique_ptr<server::PolicyObjectSource>> {
    auto config = flags.kubeconfig ? cluster::load_kubeconfig(*flags.kubeconfig, flags.context)
                                   : cluster::in_cluster_config(paths, env_copy ? &*env_copy : nullptr);
    if (!config) return make_error("policy objects: " + config.error().message);
    auto transport = cluster::make_https_transport(std::move(*config));
    if (!transport) return make_error("policy objects: " + transport.error().message);
    return std::unique_ptr<server::PolicyObjectSource>(
        std::make_unique<WatchedPolicyObjects>(std::move(*transport), json_log_sink(log)));
  };
  return setup;
}

}  // namespace gpuadmit::cli
