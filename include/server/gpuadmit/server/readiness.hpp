// What /readyz reports: ready when every condition holds and the server is not draining. Conditions are
// registered before serving starts (the policy is loaded; later, the cluster view is synced).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpuadmit::server {

class Readiness {
 public:
  // Not thread-safe: call before the server starts.
  void add_condition(std::string name, std::function<bool()> is_met);
  // A condition that says why it is unmet: `why_unmet` answers "" when it is met.
  void add_check(std::string name, std::function<std::string()> why_unmet);

  void set_draining() noexcept { draining_.store(true, std::memory_order_release); }
  [[nodiscard]] bool draining() const noexcept { return draining_.load(std::memory_order_acquire); }

  // Empty when ready; otherwise one reason per unmet condition ("draining" first when draining).
  [[nodiscard]] std::vector<std::string> unmet() const;

 private:
  std::vector<std::pair<std::string, std::function<std::string()>>> conditions_;
  std::atomic<bool> draining_{false};
};

}  // namespace gpuadmit::server
