#include "gpuadmit/server/certificate_renewer.hpp"

#include <algorithm>

namespace gpuadmit::server {
namespace {

RenewalStep failed(std::string error) {
  return {RenewalOutcome::kFailed, std::nullopt, std::move(error), kRetryAfterFailure};
}

}  // namespace

RenewalStep renew_once(CertificateSecret& secret, std::int64_t now_seconds, const RenewalPolicy& policy,
                       const std::stop_token& stop) {
  auto object = secret.get(stop);
  if (!object) return failed("GET " + secret.name() + ": " + object.error().message);
  auto renewal = renewal_of(*object, now_seconds, policy);
  if (!renewal) return failed(secret.name() + ": " + renewal.error().message);
  if (!renewal->has_value()) {
    // renewal_of said not due, so the due time is readable and in the future.
    const auto due_at = renewal_due_at(*object, policy);
    const std::chrono::seconds wait{due_at ? *due_at - now_seconds : 0};
    return {RenewalOutcome::kNotDue, std::nullopt, {}, std::clamp(wait, kShortestLook, kLongestLook)};
  }
  auto written = secret.merge_patch((*renewal)->patch, stop);
  if (!written) return failed("PATCH " + secret.name() + ": " + written.error().message);
  if (*written == CertificateSecret::Written::kConflict)
    return {RenewalOutcome::kConflict, std::nullopt, {}, kShortestLook};
  return {RenewalOutcome::kRenewed, std::move(*renewal), {}, kShortestLook};
}

RenewalLoop::RenewalLoop(std::unique_ptr<CertificateSecret> secret, RenewalPolicy policy, OnStep on_step,
                         Clock now)
    : secret_(std::move(secret)),
      policy_(policy),
      on_step_(std::move(on_step)),
      now_(now ? std::move(now) : Clock([] {
        return static_cast<std::int64_t>(
            std::chrono::system_clock::to_time_t(std::chrono::system_clock::now()));
      })),
      thread_([this](const std::stop_token& stop) { run(stop); }) {}

void RenewalLoop::run(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    lock.unlock();
    const RenewalStep step = renew_once(*secret_, now_(), policy_, stop);
    if (stop.stop_requested()) break;
    on_step_(step);
    lock.lock();
    wake_.wait_for(lock, stop, step.next_look, [] { return false; });
  }
}

}  // namespace gpuadmit::server
