#include "node_pool_fit.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

using Requirement = k8s::NodeSelectorRequirement;

// Labels whose values Karpenter knows from its instance types and zones without the pool naming them
// (Karpenter's WellKnownLabels, with the cloud providers' own): a selector on one is satisfiable unless the
// pool's requirements rule its value out.
bool well_known(std::string_view key) {
  static constexpr std::array<std::string_view, 5> kPrefixes{"karpenter.sh/", "karpenter.k8s.aws/",
                                                             "karpenter.azure.com/",
                                                             "topology.kubernetes.io/", "topology.k8s.aws/"};
  static constexpr std::array<std::string_view, 9> kKeys{"node.kubernetes.io/instance-type",
                                                         "kubernetes.io/arch",
                                                         "kubernetes.io/os",
                                                         "node.kubernetes.io/windows-build",
                                                         "beta.kubernetes.io/instance-type",
                                                         "beta.kubernetes.io/arch",
                                                         "beta.kubernetes.io/os",
                                                         "failure-domain.beta.kubernetes.io/zone",
                                                         "failure-domain.beta.kubernetes.io/region"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return key.starts_with(p); }) ||
         std::find(kKeys.begin(), kKeys.end(), key) != kKeys.end();
}

std::optional<std::int64_t> integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// Whether some value the pool's requirement `pool` allows also satisfies the pod's `pod` (same key).
bool values_meet(const Requirement& pool, const Requirement& pod) {
  if (pool.op == "In") {
    return std::any_of(pool.values.begin(), pool.values.end(), [&](const std::string& v) {
      return k8s::matches(pod, k8s::StringMap{{pod.key, v}});
    });
  }
  if (pool.op == "DoesNotExist") return pod.op == "NotIn" || pod.op == "DoesNotExist";
  if (pod.op == "In" && pool.op == "NotIn") {
    return std::any_of(pod.values.begin(), pod.values.end(),
                       [&](const std::string& v) { return !contains(pool.values, v); });
  }
  // Exists, NotIn and Gt/Lt on the pool's side leave values open on ours.
  return pod.op != "DoesNotExist" || pool.op == "NotIn";
}

bool requirement_met(const k8s::NodePool& pool, const Requirement& pod) {
  if (pod.key == "karpenter.sh/nodepool") return k8s::matches(pod, k8s::StringMap{{pod.key, pool.name}});
  if (pool.labels.contains(pod.key)) return k8s::matches(pod, pool.labels);
  bool constrained = false;
  for (const Requirement& r : pool.requirements) {
    if (r.key != pod.key) continue;
    constrained = true;
    if (!values_meet(r, pod)) return false;
  }
  if (constrained || well_known(pod.key)) return true;
  // A label neither the pool nor Karpenter defines: its nodes will not carry it.
  return pod.op == "NotIn" || pod.op == "DoesNotExist";
}

bool selector_met(const k8s::NodePool& pool, const k8s::Pod& pod) {
  for (const auto& [key, value] : pod.node_selector) {
    if (!requirement_met(pool, Requirement{key, "In", {value}})) return false;
  }
  if (!pod.has_required_affinity) return true;
  return std::any_of(pod.required_node_terms.begin(), pod.required_node_terms.end(),
                     [&](const k8s::NodeSelectorTerm& term) {
                       // A new node's name is not known: matchFields on it cannot be relied upon.
                       if (term.match_expressions.empty() || !term.match_fields.empty()) return false;
                       return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                                          [&](const Requirement& r) { return requirement_met(pool, r); });
                     });
}

// Why the pool's requirements rule out `gpus` GPUs a node, or nullopt: instance-category without a GPU
// family (g, p), or a GPU count requirement (AWS' instance-gpu-count, Azure's sku-gpu-count) below them.
std::optional<std::string> gpus_ruled_out(const k8s::NodePool& pool, std::int64_t gpus) {
  for (const Requirement& r : pool.requirements) {
    if (r.key == "karpenter.k8s.aws/instance-category") {
      const bool gpu_family = contains(r.values, "g") || contains(r.values, "p");
      if ((r.op == "In" && !gpu_family) ||
          (r.op == "NotIn" && contains(r.values, "g") && contains(r.values, "p")))
        return "its instance categories have no GPUs";
    }
    if (!r.key.ends_with("/instance-gpu-count") && !r.key.ends_with("/sku-gpu-count")) continue;
    if (r.op == "DoesNotExist") return "its instances have no GPUs";
    std::int64_t most = -1;
    if (r.op == "In") {
      for (const std::string& v : r.values) most = std::max(most, integer(v).value_or(0));
    } else if (r.op == "Lt" && !r.values.empty()) {
      const std::int64_t below = integer(r.values[0]).value_or(0);
      most = below > 0 ? below - 1 : 0;
    }
    if (most >= 0 && most < gpus) return "its instances have at most " + std::to_string(most) + " GPUs";
  }
  return std::nullopt;
}

std::optional<std::string> over_limits(const k8s::NodePool& pool, const k8s::ResourceList& wanted) {
  for (const auto& [name, limit] : pool.limits) {
    const auto want = wanted.find(name);
    if (want == wanted.end()) continue;
    const auto used = pool.used.find(name);
    const k8s::Quantity held = used != pool.used.end() ? used->second : k8s::Quantity{};
    if (held + want->second > limit)
      return "its limit of " + limit.to_string() + " " + name + " leaves " + (limit - held).to_string();
  }
  return std::nullopt;
}

// Why the pool cannot launch a node for the pod, or nullopt when it may.
std::optional<std::string> why_not(const k8s::NodePool& pool, const k8s::Pod& pod,
                                   const k8s::ResourceList& wanted, std::int64_t gpus) {
  for (const k8s::Taint& t : pool.taints) {
    if (k8s::blocks_scheduling(t) && !k8s::tolerated_by_any(pod.tolerations, t))
      return "its taint " + t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect +
             " is not tolerated";
  }
  if (!selector_met(pool, pod))
    return std::string("its nodes would not match the pod's selector or affinity");
  if (auto over = over_limits(pool, wanted)) return over;
  if (gpus > 0) return gpus_ruled_out(pool, gpus);
  return std::nullopt;
}

}  // namespace

PoolFit pool_that_could_launch(const ClusterSnapshot& cluster, const k8s::Pod& pod,
                               const k8s::ResourceList& wanted, std::int64_t gpus) {
  PoolFit fit;
  for (const k8s::NodePool& pool : cluster.node_pools) {
    auto reason = why_not(pool, pod, wanted, gpus);
    if (!reason) return {&pool, {}};
    fit.why_not.emplace_back(pool.name, std::move(*reason));
  }
  return fit;
}

std::string compute_class_of(const k8s::Pod& pod) {
  constexpr std::string_view kKey = "cloud.google.com/compute-class";
  if (const auto it = pod.node_selector.find(kKey); it != pod.node_selector.end()) return it->second;
  for (const k8s::NodeSelectorTerm& term : pod.required_node_terms) {
    for (const k8s::NodeSelectorRequirement& r : term.match_expressions) {
      if (r.key == kKey && r.op == "In" && !r.values.empty()) return r.values.front();
    }
  }
  return "";
}

}  // namespace gpuadmit::policy
