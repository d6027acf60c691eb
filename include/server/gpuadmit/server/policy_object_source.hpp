// The seam between the webhook and the policy objects in the cluster (ClusterGPUPolicy, GPUPolicy; #23
// item 4), like cluster_view.hpp's: the server does not know the cluster layer, the composition root wires a
// cluster::PolicyObjectWatch behind this.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {

class PolicyObjectSource {
 public:
  // Every ClusterGPUPolicy and every GPUPolicy, after each list; one call at a time.
  using OnChange = std::function<void(const std::vector<nlohmann::json>& cluster,
                                      const std::vector<nlohmann::json>& namespaced)>;

  PolicyObjectSource() = default;
  PolicyObjectSource(const PolicyObjectSource&) = delete;
  PolicyObjectSource& operator=(const PolicyObjectSource&) = delete;
  PolicyObjectSource(PolicyObjectSource&&) = delete;
  PolicyObjectSource& operator=(PolicyObjectSource&&) = delete;
  virtual ~PolicyObjectSource() = default;

  virtual void start(OnChange on_change) = 0;     // returns at once; called once
  virtual void stop() = 0;                        // idempotent
  [[nodiscard]] virtual bool listed() const = 0;  // both kinds listed once (a missing CRD counts)
  virtual Result<bool> write_status(const nlohmann::json& object, const nlohmann::json& status) = 0;
};

struct PolicyObjectSetup {
  using Factory = std::function<Result<std::unique_ptr<PolicyObjectSource>>(const JsonLog&)>;
  Factory make;  // empty: --policy-objects is off
  std::string cluster_policy_name = "default";
};

}  // namespace gpuadmit::server
