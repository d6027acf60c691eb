// Clock: the seam between the cluster view and time. Staleness and rebuild coalescing read "now" through
// it, so tests drive them with a FakeClock instead of sleeping.
#pragma once

#include <chrono>

namespace gpuadmit::cluster {

using Instant = std::chrono::steady_clock::time_point;

class Clock {
 public:
  Clock() = default;
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;
  virtual ~Clock() = default;

  // Monotonic; thread-safe.
  [[nodiscard]] virtual Instant now() const noexcept = 0;
};

// std::chrono::steady_clock behind the interface; lives for the whole program.
const Clock& steady_clock() noexcept;

}  // namespace gpuadmit::cluster
