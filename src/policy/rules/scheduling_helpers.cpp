// Shared by the cluster-aware rules: the pod's effective requests and ANDing into required node affinity.
#include <algorithm>

#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

k8s::ResourceList defaulted_requests(const k8s::ResourceRequirements& r) {
  k8s::ResourceList requests = r.requests;
  for (const auto& [name, limit] : r.limits) requests.try_emplace(name, limit);
  return requests;
}

// Inserting the first value keeps its format, so sums print as people wrote them (64Gi, not 68719476736).
void add_all(k8s::ResourceList& into, const k8s::ResourceList& from) {
  for (const auto& [name, q] : from) {
    auto [it, inserted] = into.try_emplace(name, q);
    if (!inserted) it->second += q;
  }
}

void max_all(k8s::ResourceList& into, const k8s::ResourceList& from) {
  for (const auto& [name, q] : from) {
    auto [it, inserted] = into.try_emplace(name, q);
    if (!inserted && q > it->second) it->second = q;
  }
}

}  // namespace

k8s::ResourceList effective_requests(const k8s::Pod& pod) {
  k8s::ResourceList app;        // app containers and every sidecar
  k8s::ResourceList init_peak;  // the largest moment of the init phase
  k8s::ResourceList sidecars_so_far;
  for (const k8s::Container& c : pod.containers) {
    const k8s::ResourceList requests = defaulted_requests(c.resources);
    switch (c.kind) {
      case k8s::ContainerKind::kInit: {
        k8s::ResourceList moment = sidecars_so_far;
        add_all(moment, requests);
        max_all(init_peak, moment);
        break;
      }
      case k8s::ContainerKind::kSidecar:
        add_all(sidecars_so_far, requests);
        add_all(app, requests);
        break;
      case k8s::ContainerKind::kRegular:
        add_all(app, requests);
        break;
    }
  }
  max_all(app, init_peak);
  if (pod.pod_resources) {
    // Pod-level requests (defaulted from pod-level limits) replace the container sums for what they name.
    for (const auto& [name, q] : defaulted_requests(*pod.pod_resources)) app[name] = q;
  }
  return app;
}

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
