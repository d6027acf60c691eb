#include "gpuadmit/cluster/clock.hpp"

namespace gpuadmit::cluster {
namespace {

class SteadyClock final : public Clock {
 public:
  [[nodiscard]] Instant now() const noexcept override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const Clock& steady_clock() noexcept {
  static const SteadyClock clock;
  return clock;
}

}  // namespace gpuadmit::cluster
