#include "gpuadmit/server/serve_policy_objects.hpp"

#include <array>
#include <chrono>
#include <ctime>

namespace gpuadmit::server {
namespace {

// Now, as RFC 3339 in UTC (to the second), for the policy objects' status.
std::string now_rfc3339() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  const std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return {text.data(), n};
}

}  // namespace

Result<std::unique_ptr<PolicyObjectSource>> policy_objects(const ServeOptions& options, const JsonLog& log,
                                                           WebhookConfig& config) {
  if (!options.policy_objects.make) return std::unique_ptr<PolicyObjectSource>();
  auto made = options.policy_objects.make(log);
  if (!made) return made.error();
  config.readiness_conditions.emplace_back("policy objects listed",
                                           [source = made->get()] { return source->listed(); });
  return std::move(*made);
}

PolicyObjectSource::OnChange on_policy_objects(Webhook& webhook, PolicyObjectSource& source,
                                               std::string cluster_policy_name, const JsonLog& log) {
  return [&webhook, &source, name = std::move(cluster_policy_name), log](
             const std::vector<nlohmann::json>& cluster, const std::vector<nlohmann::json>& namespaced) {
    PolicyStore& store = webhook.policy();
    const std::vector<StatusUpdate> updates = store.apply_objects(cluster, namespaced, name, now_rfc3339());
    const auto set = store.policies();
    log.info("policy objects applied", {{"cluster_policies", cluster.size()},
                                        {"namespace_policies", namespaced.size()},
                                        {"namespaces_tightened", set ? set->namespaces.size() : 0},
                                        {"status_updates", updates.size()}});
    for (const StatusUpdate& update : updates) {
      const nlohmann::json& meta = update.object["metadata"];
      const std::string object =
          update.object.value("kind", std::string()) + " " + meta.value("namespace", std::string()) +
          (meta.value("namespace", std::string()).empty() ? "" : "/") + meta.value("name", std::string());
      const nlohmann::json& ready = update.status["conditions"][0];
      const LogFields fields{{"object", object},
                             {"active", update.status["active"]},
                             {"reason", ready["reason"]},
                             {"message", ready["message"]}};
      if (ready["reason"] == "Invalid") {
        webhook.metrics().policy_reloads.with({std::string(kReloadFailure)}).inc();
        log.error("policy object refused", fields);
      } else {
        if (ready["reason"] == "Loaded")
          webhook.metrics().policy_reloads.with({std::string(kReloadSuccess)}).inc();
        log.info("policy object status", fields);
      }
      if (auto written = source.write_status(update.object, update.status); !written) {
        log.warn("policy object status not written",
                 {{"object", object}, {"error", written.error().message}});
      }
    }
  };
}

}  // namespace gpuadmit::server
