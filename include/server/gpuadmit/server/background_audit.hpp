// The seam between `gpuadmit serve` and its background audit (docs/cluster.md, "Background audit"). As with
// the cluster view, the server layer does not know the cluster layer: the composition root makes the audit
// (Lease, listing, PolicyReports) and serve starts it once the webhook exists, hands it the policies in
// force and the cluster view, appends its series to /metrics and stops it before the webhook goes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/policy_set.hpp"
#include "gpuadmit/server/cluster_view.hpp"
#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {

class BackgroundAudit {
 public:
  BackgroundAudit() = default;
  BackgroundAudit(const BackgroundAudit&) = delete;
  BackgroundAudit& operator=(const BackgroundAudit&) = delete;
  BackgroundAudit(BackgroundAudit&&) = delete;
  BackgroundAudit& operator=(BackgroundAudit&&) = delete;
  virtual ~BackgroundAudit() = default;

  using Policies = std::function<std::shared_ptr<const policy::PolicySet>()>;
  // Returns at once; audits in the background, every interval, while this replica holds the Lease.
  virtual void start(Policies policies) = 0;
  // Idempotent; gives the Lease up.
  virtual void stop() = 0;
  // gpuadmit_audit_violations and the audit's own series; thread-safe, never blocking on the API server.
  [[nodiscard]] virtual std::string metrics_text() const = 0;
};

struct BackgroundAuditSetup {
  // The cluster view the audit judges against (it must outlive the audit).
  using Factory =
      std::function<Result<std::unique_ptr<BackgroundAudit>>(const JsonLog&, const ClusterViewProvider&)>;
  Factory make;  // empty: off (the binary's default)
  std::chrono::seconds interval{0};
  std::string lease;  // "NAMESPACE/NAME", for the start-up log
};

}  // namespace gpuadmit::server
