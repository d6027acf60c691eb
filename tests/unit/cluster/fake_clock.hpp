// A Clock that moves only when a test says so.
#pragma once

#include <atomic>

#include "gpuadmit/cluster/clock.hpp"

namespace gpuadmit::test {

class FakeClock final : public cluster::Clock {
 public:
  [[nodiscard]] cluster::Instant now() const noexcept override {
    return cluster::Instant(std::chrono::nanoseconds(ns_.load()));
  }
  void advance(std::chrono::nanoseconds by) noexcept { ns_.fetch_add(by.count()); }

 private:
  std::atomic<std::int64_t> ns_{std::chrono::nanoseconds(std::chrono::hours(1)).count()};
};

}  // namespace gpuadmit::test
