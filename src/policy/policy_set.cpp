#include "gpuadmit/policy/policy_set.hpp"

namespace gpuadmit::policy {

const RuleSet& PolicySet::for_namespace(std::string_view ns) const {
  if (const auto it = namespaces.find(ns); it != namespaces.end()) return *it->second;
  return *cluster;
}

PolicySet PolicySet::of(const RuleSet& rules) {
  // The aliasing constructor: a pointer to `rules` that shares ownership of nothing.
  return PolicySet{std::shared_ptr<const RuleSet>(std::shared_ptr<const RuleSet>(), &rules), {}};
}

}  // namespace gpuadmit::policy
