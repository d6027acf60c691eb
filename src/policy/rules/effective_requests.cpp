// The pod's effective requests, summed as the scheduler sums them: what node-fit fits to a node, what
// gpu-quota counts, and where gpu_requests (eligible_nodes.cpp) finds the pod's GPUs.
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

}  // namespace gpuadmit::policy
