#include "gpuadmit/server/readiness.hpp"

namespace gpuadmit::server {

void Readiness::add_condition(std::string name, std::function<bool()> is_met) {
  add_check(std::move(name), [is_met = std::move(is_met)] { return is_met() ? std::string() : "not yet"; });
}

void Readiness::add_check(std::string name, std::function<std::string()> why_unmet) {
  conditions_.emplace_back(std::move(name), std::move(why_unmet));
}

std::vector<std::string> Readiness::unmet() const {
  std::vector<std::string> reasons;
  if (draining()) reasons.emplace_back("draining: shutting down");
  for (const auto& [name, why_unmet] : conditions_) {
    if (std::string why = why_unmet(); !why.empty()) reasons.push_back(name + ": " + why);
  }
  return reasons;
}

}  // namespace gpuadmit::server
