#include "gpuadmit/k8s/qos.hpp"

#include <vector>

namespace gpuadmit::k8s {
namespace {

bool is_qos_resource(std::string_view name) {
  return name == "cpu" || name == "memory";
}

// Limits-only containers count as Guaranteed because the API server defaults requests from limits
// before admission (SetDefaults_Pod); the same defaulting here makes templates behave like pods.
ResourceList effective_requests(const ResourceRequirements& r) {
  ResourceList requests = r.requests;
  for (const auto& [name, limit] : r.limits) requests.try_emplace(name, limit);
  return requests;
}

// Mirrors ComputePodQOS: sums positive cpu/memory requests and limits over all the given requirement
// sets; Guaranteed needs every set to carry both cpu and memory limits and the sums to match.
QosClass compute(const std::vector<const ResourceRequirements*>& sets) {
  ResourceList requests;
  ResourceList limits;
  bool guaranteed = true;
  for (const ResourceRequirements* r : sets) {
    for (const auto& [name, q] : effective_requests(*r)) {
      if (!is_qos_resource(name) || q <= Quantity{}) continue;
      requests[name] += q;
    }
    int limits_found = 0;
    for (const auto& [name, q] : r->limits) {
      if (!is_qos_resource(name) || q <= Quantity{}) continue;
      ++limits_found;
      limits[name] += q;
    }
    if (limits_found < 2) guaranteed = false;
  }
  if (requests.empty() && limits.empty()) return QosClass::kBestEffort;
  if (guaranteed) {
    for (const auto& [name, request] : requests) {
      const auto limit = limits.find(name);
      if (limit == limits.end() || limit->second != request) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size() == limits.size() ? QosClass::kGuaranteed : QosClass::kBurstable;
}

}  // namespace

std::string_view to_string(QosClass qos) noexcept {
  switch (qos) {
    case QosClass::kBestEffort:
      return "BestEffort";
    case QosClass::kBurstable:
      return "Burstable";
    case QosClass::kGuaranteed:
      return "Guaranteed";
  }
  return "Unknown";
}

QosClass resource_qos(const ResourceRequirements& resources) {
  return compute({&resources});
}

QosClass compute_qos(const Pod& pod) {
  // PodLevelResources is on by default from 1.34: a pod-level stanza decides alone.
  if (pod.pod_resources) return compute({&*pod.pod_resources});
  std::vector<const ResourceRequirements*> sets;
  sets.reserve(pod.containers.size());
  for (const Container& c : pod.containers) sets.push_back(&c.resources);
  return compute(sets);
}

}  // namespace gpuadmit::k8s
