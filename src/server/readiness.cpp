#include "gpuadmit/server/readiness.hpp"

namespace gpuadmit::server {

void Readiness::add_condition(std::string name, std::function<bool()> is_met) {
  conditions_.emplace_back(std::move(name), std::move(is_met));
}

std::vector<std::string> Readiness::unmet() const {
  std::vector<std::string> reasons;
  if (draining()) reasons.emplace_back("draining: shutting down");
  for (const auto& [name, is_met] : conditions_) {
    if (!is_met()) reasons.push_back(name + ": not yet");
  }
  return reasons;
}

}  // namespace gpuadmit::server
