// serve --renew-secret: the server renews its own serving certificate from the CA kept in the TLS Secret
// (#22 item 1, as Kyverno does). It looks at the Secret when the certificate becomes due (and at least
// every 10 minutes, so a Secret replaced by `helm upgrade` or `helm rollback` is seen), writes the renewal
// with the Secret's resourceVersion (of several replicas one wins, the others get 409 and their mounted copy
// follows), and serves the new pair from the next handshake. The server does not know the cluster layer: the
// composition root wires the API server behind CertificateSecret.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/certificate_renewal.hpp"
#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {

// The TLS Secret, as the renewer reads and writes it.
class CertificateSecret {
 public:
  enum class Written : std::uint8_t { kPatched, kConflict };  // kConflict: 409, another writer was first

  CertificateSecret() = default;
  CertificateSecret(const CertificateSecret&) = delete;
  CertificateSecret& operator=(const CertificateSecret&) = delete;
  CertificateSecret(CertificateSecret&&) = delete;
  CertificateSecret& operator=(CertificateSecret&&) = delete;
  virtual ~CertificateSecret() = default;

  // Both give up when `stop` is requested (the server shutting down).
  virtual Result<nlohmann::json> get(std::stop_token stop) = 0;
  virtual Result<Written> merge_patch(const nlohmann::json& patch, std::stop_token stop) = 0;
  [[nodiscard]] virtual std::string name() const = 0;  // "namespace/name", for logs
};

// Seconds since the Unix epoch.
using Clock = std::function<std::int64_t()>;

struct RenewalSetup {
  using Factory = std::function<Result<std::unique_ptr<CertificateSecret>>(const JsonLog&)>;
  Factory make;  // empty: --renew-secret is off
  RenewalPolicy policy;
  Clock now;  // empty: the system clock (a test moves it to the day a certificate is due)
};

enum class RenewalOutcome : std::uint8_t { kNotDue, kRenewed, kConflict, kFailed };

struct RenewalStep {
  RenewalOutcome outcome = RenewalOutcome::kNotDue;
  std::optional<Renewal> renewal;  // kRenewed: the pair to serve now
  std::string error;               // kFailed: what to fix, for the log
  std::chrono::seconds next_look{0};
};

// Bounds on the wait between looks: a due time far away is still re-checked every 10 minutes (a rollback
// may put back a certificate that has expired since; one small GET per replica is nothing to the API
// server), a renewal or a conflict is followed by a look soon after, a failure is retried without flooding
// the log.
inline constexpr std::chrono::seconds kLongestLook{600};
inline constexpr std::chrono::seconds kShortestLook{10};
inline constexpr std::chrono::seconds kRetryAfterFailure{300};

// One look at the Secret at `now_seconds`: renew if due, and when to look again.
RenewalStep renew_once(CertificateSecret& secret, std::int64_t now_seconds, const RenewalPolicy& policy,
                       const std::stop_token& stop = {});

// renew_once on a thread of its own, from construction (a first look at once) until destruction; each step
// goes to `on_step` (the server serves a renewed pair, logs, counts).
class RenewalLoop {
 public:
  using OnStep = std::function<void(const RenewalStep&)>;
  RenewalLoop(std::unique_ptr<CertificateSecret> secret, RenewalPolicy policy, OnStep on_step,
              Clock now = {});
  RenewalLoop(const RenewalLoop&) = delete;
  RenewalLoop& operator=(const RenewalLoop&) = delete;
  RenewalLoop(RenewalLoop&&) = delete;
  RenewalLoop& operator=(RenewalLoop&&) = delete;
  ~RenewalLoop() = default;  // jthread requests stop and joins; the wait wakes on the stop token

 private:
  void run(const std::stop_token& stop);

  std::unique_ptr<CertificateSecret> secret_;
  RenewalPolicy policy_;
  OnStep on_step_;
  Clock now_;
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: started after the members it uses exist
};

}  // namespace gpuadmit::server
