// Bounded exponential backoff with jitter for the list/watch loops: after n consecutive failures the wait is
// drawn from [d/2, d] with d = min(max, initial * 2^n). Jitter spreads the reconnects of many replicas after
// an API server restart; the bound keeps recovery within `max` of the server coming back.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace gpuadmit::cluster {

struct BackoffPolicy {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{30'000};
};

class Backoff {
 public:
  explicit Backoff(BackoffPolicy policy, std::uint64_t seed = std::random_device{}());

  // The wait before the next attempt; each call counts one more failure.
  [[nodiscard]] std::chrono::milliseconds next();
  // After a success: the next failure waits about `initial` again.
  void reset() noexcept { failures_ = 0; }
  [[nodiscard]] std::uint32_t failures() const noexcept { return failures_; }

 private:
  BackoffPolicy policy_;
  std::uint32_t failures_ = 0;
  std::mt19937_64 random_;
};

}  // namespace gpuadmit::cluster
