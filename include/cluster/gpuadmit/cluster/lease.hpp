// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection (and so
// controller-runtime) does it: the holder renews the Lease every `retry`; another candidate takes it over
// once it has seen the same record unchanged for `duration` by its own monotonic clock, so clock skew
// between nodes does not matter. Writes carry the resourceVersion read, so two candidates never both win.
// The holder that cannot renew for `renew_deadline` stops leading before anyone may take over
// (renew_deadline < duration), so two replicas never audit at once.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/clock.hpp"
#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct LeaseSettings {
  std::string namespace_;
  std::string name;
  std::string identity;  // this replica: the pod's name
  // controller-runtime's defaults.
  std::chrono::seconds duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry{2};
};

// The fields of a Lease that election reads.
struct LeaseRecord {
  std::string holder;
  std::string acquire_time;
  std::string renew_time;
  std::int64_t duration_seconds = 0;
  std::int64_t transitions = 0;
  std::string resource_version;
};
Result<LeaseRecord> parse_lease(const nlohmann::json& lease);

// The Lease object that makes `identity` the holder (a create without a resourceVersion, a replace with).
// `now`: MicroTime, "2026-12-04T16:00:00.000000Z".
nlohmann::json lease_object(const LeaseSettings& settings, const std::optional<LeaseRecord>& current,
                            const std::string& now);

// RFC 3339 with microseconds in UTC, as metav1.MicroTime is written.
std::string micro_time(std::chrono::system_clock::time_point time);

class LeaderElection {
 public:
  LeaderElection(std::shared_ptr<ApiTransport> transport, LeaseSettings settings, const Clock& clock,
                 LogSink log, std::function<std::chrono::system_clock::time_point()> wall_clock = {});

  // One round: read the Lease, and create, renew or take it over when this replica may. Returns whether it
  // leads afterwards. A failure to renew keeps the lead until renew_deadline has passed since the last
  // renewal.
  bool try_acquire_or_renew(std::stop_token stop);
  // Rounds every `retry` until stopped; then gives the Lease up (holder "", duration 1 s) if it leads, so
  // another replica takes over at once instead of after `duration`.
  void run(std::stop_token stop);
  [[nodiscard]] bool leading() const noexcept { return leading_.load(); }
  [[nodiscard]] const LeaseSettings& settings() const noexcept { return settings_; }

 private:
  [[nodiscard]] std::string path() const;
  void set_leading(bool leading, const std::string& why);
  bool renew_failed(const std::string& why);
  void release();

  std::shared_ptr<ApiTransport> transport_;
  LeaseSettings settings_;
  const Clock& clock_;
  LogSink log_;
  std::function<std::chrono::system_clock::time_point()> wall_clock_;
  std::atomic<bool> leading_{false};
  // Only the election thread touches these.
  std::optional<LeaseRecord> observed_;
  Instant observed_at_{};
  Instant last_renewal_{};
};

}  // namespace gpuadmit::cluster
