// gpu-quota: say at apply time that the namespace's ResourceQuota cannot hold the pod, with the numbers,
// or refuses it outright because a container leaves out a resource the quota constrains. Only the quotas
// whose scopes match the pod count, as in the API server's quota admission.
#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "../dra_devices.hpp"
#include "../rule_context.hpp"
#include "gpuadmit/k8s/qos.hpp"
#include "gpuadmit/policy/catalogue.hpp"

namespace gpuadmit::policy {
namespace {

// Whether one scope holds for the pod (ResourceQuota's podMatchesScopeFunc); nullopt when gpuadmit does not
// read what it depends on (CrossNamespacePodAffinity: pod affinity terms), or the scope is not about pods.
std::optional<bool> scope_holds(const k8s::ScopeRequirement& r, const k8s::Pod& pod) {
  if (r.scope_name == "PriorityClass") {
    const std::string& name = pod.priority_class_name;
    const bool listed = std::find(r.values.begin(), r.values.end(), name) != r.values.end();
    if (r.op == "In") return !name.empty() && listed;
    if (r.op == "NotIn") return name.empty() || !listed;
    if (r.op == "Exists") return !name.empty();
    if (r.op == "DoesNotExist") return name.empty();
    return std::nullopt;
  }
  std::optional<bool> holds;
  if (r.scope_name == "BestEffort" || r.scope_name == "NotBestEffort") {
    const bool best_effort = k8s::compute_qos(pod) == k8s::QosClass::kBestEffort;
    holds = r.scope_name == "BestEffort" ? best_effort : !best_effort;
  } else if (r.scope_name == "Terminating" || r.scope_name == "NotTerminating") {
    holds = r.scope_name == "Terminating" ? pod.has_active_deadline : !pod.has_active_deadline;
  } else if (r.scope_name == "VolumeAttributesClass") {
    holds = false;  // counts claims, never pods
  } else {
    return std::nullopt;
  }
  if (r.op == "Exists" || r.op.empty()) return holds;
  if (r.op == "DoesNotExist") return !*holds;
  return std::nullopt;
}

// A quota counts a pod when every scope and every scopeSelector expression holds; a quota with a scope
// gpuadmit cannot judge is left out (no warning is better than a wrong one).
bool quota_counts(const k8s::ResourceQuota& quota, const k8s::Pod& pod) {
  for (const std::string& scope : quota.scopes) {
    const auto holds = scope_holds({scope, "Exists", {}}, pod);
    if (!holds || !*holds) return false;
  }
  for (const k8s::ScopeRequirement& r : quota.scope_selector) {
    const auto holds = scope_holds(r, pod);
    if (!holds || !*holds) return false;
  }
  return true;
}

// The quota keys that make the API server demand an explicit value in every container ("must specify"):
// pods.go's validationSet, kept for backward compatibility by quota admission. A bare name is the request.
struct MustSpecify {
  const char* key;
  bool limit;
  const char* resource;
};
constexpr std::array<MustSpecify, 6> kMustSpecify{{{"cpu", false, "cpu"},
                                                   {"memory", false, "memory"},
                                                   {"requests.cpu", false, "cpu"},
                                                   {"requests.memory", false, "memory"},
                                                   {"limits.cpu", true, "cpu"},
                                                   {"limits.memory", true, "memory"}}};

// Containers (init and sidecars too) that set no value for a must-specify key. Requests count when set
// or defaulted from the limit, as the API server defaults them before admission.
std::string missing_in(const k8s::Pod& pod, bool limit, std::string_view resource) {
  std::string names;
  for (const k8s::Container& c : pod.containers) {
    const bool set =
        c.resources.limits.contains(resource) || (!limit && c.resources.requests.contains(resource));
    if (!set) names += (names.empty() ? "" : ",") + c.name;
  }
  return names;
}

void report_must_specify(RuleContext& ctx, const k8s::ResourceQuota& quota) {
  const k8s::Pod& pod = ctx.pod();
  if (pod.pod_resources) return;  // pod-level resources: how quota reads them is not modelled here
  for (const auto& [key, limit, resource] : kMustSpecify) {
    if (!quota.hard.contains(key)) continue;
    const std::string names = missing_in(pod, limit, resource);
    if (names.empty()) continue;
    const std::string k(key);
    const std::string where = limit ? "limits" : "requests";
    // A partial pod's runtime may set the value (KServe defaults container requests): said, not denied.
    const Action action =
        ctx.partial() ? std::min(ctx.rules().gpu_quota.action, Action::kWarn) : ctx.rules().gpu_quota.action;
    const std::string left = ctx.partial() ? "left to the runtime: " : "";
    ctx.report(action, "spec.containers",
               "ResourceQuota " + quota.name + " in namespace " + quota.namespace_ + " constrains " + k +
                   ", so the API server refuses every pod it counts whose containers do not all set it "
                   "(\"failed quota: " +
                   quota.name + ": must specify " + k + " for: " + names +
                   "\"); a controller's pods are refused silently, as events on the ReplicaSet or Job.\nFix: "
                   "set resources." +
                   where + "." + resource + " on container(s) " + names +
                   ", or ask the cluster admins for a LimitRange that defaults it.",
               left + "ResourceQuota " + quota.name + " requires " + k + " on every container; " + names +
                   " set none, so the API server refuses the pod");
  }
}

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

// The devices per class that the claims made from the pod's templates will ask for (a claim named by
// resourceClaimName exists already and is counted in `used`); All is left out (how many is the node's).
std::map<std::string, std::int64_t> template_devices(const k8s::Pod& pod, const ClusterSnapshot& cluster) {
  std::map<std::string, std::int64_t> out;
  for (const PodClaim& claim : resolve_claims(pod, &cluster)) {
    if (claim.spec == nullptr || claim.ref->template_name.empty()) continue;
    for (const k8s::DeviceRequest& request : claim.spec->requests) {
      if (request.alternatives.size() != 1 || request.alternatives.front().all) continue;
      const k8s::DeviceSubRequest& way = request.alternatives.front();
      out[way.device_class] += std::clamp<std::int64_t>(way.count, 0, 1 << 20);
    }
  }
  return out;
}

// DRA device quota (<class>.deviceclass.resource.k8s.io/devices): the ResourceClaim controller creates
// each pod's claims after the pod, so a claim over quota is refused as a controller event and the pod
// waits in Pending.
void report_claim_quota(RuleContext& ctx, const k8s::ResourceQuota& quota,
                        const std::map<std::string, std::int64_t>& devices) {
  for (const auto& [cls, count] : devices) {
    const std::string key = cls + ".deviceclass.resource.k8s.io/devices";
    const auto hard = quota.hard.find(key);
    if (hard == quota.hard.end()) continue;
    const auto used_it = quota.used.find(key);
    k8s::Quantity left = hard->second - (used_it == quota.used.end() ? k8s::Quantity{} : used_it->second);
    if (left.is_negative()) left = k8s::Quantity{};
    const std::int64_t pods = ctx.replicas();
    const k8s::Quantity asked = k8s::Quantity::from_units(count).times(pods);
    if (asked <= left) continue;
    const std::string ask = (pods == 1 ? "this pod's claims ask for "
                                       : "the claims of its " + std::to_string(pods) + " pods ask for ") +
                            human(asked);
    ctx.report(
        ctx.rules().gpu_quota.action, "spec.resourceClaims",
        "namespace " + quota.namespace_ + " has " + human(left) + " of " + human(hard->second) + " " + key +
            " left (ResourceQuota " + quota.name + "); " + ask +
            ". The ResourceClaim controller's claims are refused with \"exceeded quota\", as events, and "
            "the pod waits in Pending.\nFix: free devices in the namespace, ask for fewer, or ask the "
            "cluster admins to raise the quota.",
        "ResourceQuota " + quota.name + " has " + human(left) + " of " + human(hard->second) + " " + key +
            " left; " + ask);
  }
}

}  // namespace

void rule_gpu_quota(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (!ctx.needs_gpu_node()) return;
  const k8s::Pod& pod = ctx.pod();
  const k8s::ResourceList requests = effective_requests(pod);
  const k8s::ResourceList limits = defaulted_limits_sum(pod);
  const std::string& ns = pod.meta.namespace_;
  const std::map<std::string, std::int64_t> claim_devices = template_devices(pod, *cluster);
  for (const k8s::ResourceQuota& quota : cluster->quotas) {
    if (quota.namespace_ != ns) continue;
    if (!claim_devices.empty()) report_claim_quota(ctx, quota, claim_devices);
    if (!quota_counts(quota, pod)) continue;
    report_must_specify(ctx, quota);
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
          ctx.rules().gpu_quota.action, "spec.containers",
          figures +
              ". The API server will refuse it with \"exceeded quota\"; a controller's pods are refused "
              "silently, as events on the ReplicaSet or Job.\nFix: free capacity in the namespace, ask "
              "for less, or ask the cluster admins to raise the quota.",
          "ResourceQuota " + quota.name + " has " + human(left) + " of " + human(hard) + " " + key +
              " left; " + ask);
    }
  }
}

namespace {

// What the shares ask for of one GPU quota key, and whether one of them alone is over `left`.
struct Together {
  k8s::Quantity total;
  std::string parts;  // "replicatedJobs[a]: 1 × 2, replicatedJobs[b]: 1 × 1"
  int counted = 0;
  bool one_alone_over = false;
};

Together together(const std::vector<QuotaShare>& shares, const k8s::ResourceQuota& quota, bool limit,
                  const std::string& resource, const k8s::Quantity& left) {
  Together t;
  for (const QuotaShare& share : shares) {
    if (share.replicas <= 0 || !quota_counts(quota, share.pod)) continue;
    const k8s::ResourceList demand = limit ? defaulted_limits_sum(share.pod) : effective_requests(share.pod);
    const auto it = demand.find(resource);
    if (it == demand.end() || !(it->second > k8s::Quantity{})) continue;
    const k8s::Quantity asked = it->second.times(share.replicas);
    t.one_alone_over = t.one_alone_over || left < asked;
    t.total += asked;
    ++t.counted;
    t.parts += (t.parts.empty() ? "" : ", ") + (share.tag.empty() ? "" : share.tag + ": ") +
               std::to_string(share.replicas) + " × " + human(it->second);
  }
  return t;
}

}  // namespace

void check_workload_gpu_quota(const std::vector<QuotaShare>& shares, const RuleSet& rules,
                              const ClusterView* view, std::string_view ns, Decision& decision) {
  Action action = rules.gpu_quota.action;
  if (view == nullptr || view->snapshot == nullptr || shares.size() < 2 || action == Action::kOff) return;
  std::string age;
  // The kinds the rule reads (its catalogue entry), the device kinds only when a share uses claims.
  const RuleEntry& entry = *find_rule("gpu-quota");
  const bool claims = std::any_of(shares.begin(), shares.end(),
                                  [](const QuotaShare& share) { return !share.pod.resource_claims.empty(); });
  const ViewKinds reads = entry.reads | (claims ? entry.reads_for_claims : 0);
  if (view->stale_for(reads) && rules.on_stale_cluster != OnStale::kEnforce) {
    if (rules.on_stale_cluster == OnStale::kSkip) return;
    if (action == Action::kEnforce) action = Action::kWarn;
    age = "(cluster view " + std::to_string(view->age_seconds) + "s old) ";
  }
  for (const k8s::ResourceQuota& quota : view->snapshot->quotas) {
    if (quota.namespace_ != ns) continue;
    for (const auto& [key, hard] : quota.hard) {
      const bool limit = key.starts_with("limits.");
      const std::string resource = limit ? key.substr(7) : key.starts_with("requests.") ? key.substr(9) : "";
      if (!rules.is_gpu_resource(resource)) continue;
      const auto used_it = quota.used.find(key);
      k8s::Quantity left = hard - (used_it == quota.used.end() ? k8s::Quantity{} : used_it->second);
      if (left.is_negative()) left = k8s::Quantity{};
      const Together t = together(shares, quota, limit, resource, left);
      if (t.counted < 2 || t.one_alone_over || !(left < t.total)) continue;
      const std::string figures = "namespace " + std::string(ns) + " has " + human(left) + " of " +
                                  human(hard) + " " + key + " left (ResourceQuota " + quota.name + ")";
      const std::string message =
          age + figures + "; the pods of its templates run at once and together ask for " + human(t.total) +
          " (" + t.parts +
          "). Each fits alone, not together: the API server will refuse the pods beyond the quota with "
          "\"exceeded quota\", as events on the controller's objects, and the others wait for them.\nFix: "
          "free "
          "capacity in the namespace, ask for fewer replicas or GPUs, or ask the cluster admins to raise the "
          "quota.";
      const std::string summary =
          one_line("gpu-quota: " + age + "its templates together ask for " + human(t.total) + " " + resource +
                   "; ResourceQuota " + quota.name + " has " + human(left) + " of " + human(hard) + " left");
      std::vector<Finding>& list = action == Action::kEnforce ? decision.violations
                                   : action == Action::kWarn  ? decision.warnings
                                                              : decision.audits;
      list.push_back({"gpu-quota", action, "spec", message, summary});
    }
  }
}

void read_gpu_quota(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.gpu_quota.action);
}

}  // namespace gpuadmit::policy
