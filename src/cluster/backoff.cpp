#include "gpuadmit/cluster/backoff.hpp"

#include <algorithm>

namespace gpuadmit::cluster {

Backoff::Backoff(BackoffPolicy policy, std::uint64_t seed) : policy_(policy), random_(seed) {
  policy_.initial = std::max(policy_.initial, std::chrono::milliseconds(1));
  policy_.max = std::max(policy_.max, policy_.initial);
}

std::chrono::milliseconds Backoff::next() {
  // Doubling stops at the cap, so the shift never overflows however long the outage lasts.
  std::int64_t ceiling = policy_.initial.count();
  for (std::uint32_t i = 0; i < failures_ && ceiling < policy_.max.count(); ++i) ceiling *= 2;
  ceiling = std::min(ceiling, policy_.max.count());
  ++failures_;
  std::uniform_int_distribution<std::int64_t> jitter(ceiling / 2, ceiling);
  return std::chrono::milliseconds(jitter(random_));
}

}  // namespace gpuadmit::cluster
