// The composition root's half of --policy-objects: which API server, and cluster::PolicyObjectWatch behind
// server::PolicyObjectSource.
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
  if (!flags.kubeconfig && !in_cluster(env)) {
    return make_error("--policy-objects needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
  }
  setup.make = [connect = api_transport_factory(flags, env, paths, "policy objects")](
                   const server::JsonLog& log) -> Result<std::unique_ptr<server::PolicyObjectSource>> {
    auto transport = connect();
    if (!transport) return transport.error();
    return std::unique_ptr<server::PolicyObjectSource>(
        std::make_unique<WatchedPolicyObjects>(std::move(*transport), json_log_sink(log)));
  };
  return setup;
}

}  // namespace gpuadmit::cli
