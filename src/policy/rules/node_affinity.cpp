// ANDing into the pod's required node affinity: how gpu-type and cuda-driver keep a pod on the nodes they
// choose without dropping the user's own terms.
#include <algorithm>

#include "../rule_context.hpp"

namespace gpuadmit::policy {

bool require_node_affinity(nlohmann::json& affinity, const std::vector<nlohmann::json>& alternatives) {
  using nlohmann::json;
  json& required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  if (!required.is_object()) required = json::object();
  json& terms = required["nodeSelectorTerms"];
  if (!terms.is_array() || terms.empty()) terms = json::array({json::object()});

  const auto holds = [](const json& term, const json& expressions) {
    const auto it = term.find("matchExpressions");
    if (it == term.end() || !it->is_array()) return false;
    return std::all_of(expressions.begin(), expressions.end(),
                       [&](const json& e) { return std::find(it->begin(), it->end(), e) != it->end(); });
  };
  const bool done = std::all_of(terms.begin(), terms.end(), [&](const json& term) {
    return std::any_of(alternatives.begin(), alternatives.end(),
                       [&](const json& alt) { return holds(term, alt); });
  });
  if (done) return false;

  json result = json::array();
  for (const json& term : terms) {
    for (const json& alt : alternatives) {
      json combined = term;
      json& expressions = combined["matchExpressions"];
      if (!expressions.is_array()) expressions = json::array();
      for (const json& e : alt) {
        if (std::find(expressions.begin(), expressions.end(), e) == expressions.end())
          expressions.push_back(e);
      }
      result.push_back(std::move(combined));
    }
  }
  terms = std::move(result);
  return true;
}

}  // namespace gpuadmit::policy
