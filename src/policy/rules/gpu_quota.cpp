// gpu-quota: say at apply time that the namespace's ResourceQuota cannot hold the pod, with the numbers.
#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kGpuQuota = "gpu-quota";

k8s::ResourceList defaulted_limits_sum(const k8s::Pod& pod) {
  k8s::ResourceList sum;
  for (const k8s::Container& c : pod.containers) {
    if (c.kind == k8s::ContainerKind::kInit) continue;
    for (const auto& [name, q] : c.resources.limits) {
      auto [it, inserted] = sum.try_emplace(name, q);
      if (!inserted) it->second += q;
    }
  }
  return sum;
}

}  // namespace

void rule_gpu_quota(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (!ctx.is_gpu_pod()) return;
  const k8s::Pod& pod = ctx.pod();
  const k8s::ResourceList requests = effective_requests(pod);
  const k8s::ResourceList limits = defaulted_limits_sum(pod);
  const std::string& ns = pod.meta.namespace_;
  for (const k8s::ResourceQuota& quota : cluster->quotas) {
    if (quota.namespace_ != ns) continue;
    for (const auto& [key, hard] : quota.hard) {
      // Quota keys: "requests.<r>", "limits.<r>", bare "cpu"/"memory" (= requests), and "pods".
      std::string resource = key;
      const k8s::ResourceList* demand = &requests;
      if (key.starts_with("requests.")) {
        resource = key.substr(9);
      } else if (key.starts_with("limits.")) {
        resource = key.substr(7);
        demand = &limits;
      } else if (key != "cpu" && key != "memory" && key != "pods") {
        continue;  // object counts, storage: not this rule's business
      }
      // A workload's template is judged once for all the pods it runs at once (replicas, parallelism).
      const std::int64_t pods = ctx.replicas();
      const k8s::Quantity per_pod = resource == "pods" ? k8s::Quantity::from_units(1) : [&] {
        const auto it = demand->find(resource);
        return it == demand->end() ? k8s::Quantity{} : it->second;
      }();
      const k8s::Quantity asked = per_pod.times(pods);
      if (!(asked > k8s::Quantity{})) continue;
      const auto used_it = quota.used.find(key);
      const k8s::Quantity used = used_it == quota.used.end() ? k8s::Quantity{} : used_it->second;
      k8s::Quantity left = hard - used;
      if (left.is_negative()) left = k8s::Quantity{};
      if (asked <= left) continue;
      const std::string ask = pods == 1 ? "this pod asks for " + human(asked)
                                        : "its " + std::to_string(pods) + " pods ask for " + human(asked);
      const std::string left_text =
          "namespace " + ns + " has " + human(left) + " of " + human(hard) + " " + key + " left";
      const std::string figures =
          left_text + " (ResourceQuota " + quota.name + "); " + ask +
          (pods == 1 ? "" : " (" + std::to_string(pods) + " x " + human(per_pod) + ")");
      ctx.report(
          kGpuQuota, ctx.rules().gpu_quota.action, "spec.containers",
          figures +
              ". The API server will refuse it with \"exceeded quota\"; a controller's pods are refused "
              "silently, as events on the ReplicaSet or Job.\nFix: free capacity in the namespace, ask "
              "for less, or ask the cluster admins to raise the quota.",
          left_text + "; " + ask);
    }
  }
}

}  // namespace gpuadmit::policy
