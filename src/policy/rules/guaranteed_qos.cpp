// guaranteed-qos: a Burstable GPU pod is evicted first under memory pressure, hours into a training run.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <variant>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/qos.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::array<const char*, 2> kQosResources{"cpu", "memory"};

// The node groups the pod could use (eligible_gpu_groups), for bounding what a fix writes. No cluster: no
// view, so no size is chosen.
struct Nodes {
  std::vector<ClusterSnapshot::NodeGroup> groups;
  const ClusterSnapshot* cluster = nullptr;
  // A pod whose GPUs come from DRA claims: node position → its devices of those classes.
  std::map<std::size_t, std::int64_t> dra_gpus;

  // The largest allocatable amount of `resource` on one of them: a raised request must fit there.
  [[nodiscard]] std::optional<k8s::Quantity> largest(std::string_view resource) const {
    std::optional<k8s::Quantity> out;
    for (const ClusterSnapshot::NodeGroup& g : groups) {
      const auto& allocatable = cluster->nodes[g.first].allocatable;
      const auto it = allocatable.find(resource);
      if (it != allocatable.end() && (!out || it->second > *out)) out = it->second;
    }
    return out;
  }
};

// The default for `resource` of a stanza holding `gpus` GPUs: the policy's per-GPU figure, bounded by the
// per-GPU share of the smallest node the pod could use less a tenth for the DaemonSet pods every node runs
// (kube-proxy, logging, the device plugin), rounded down to 100m of cpu or a whole Gi of memory (Mi below
// 1Gi). None when no node the pod could use is known.
std::optional<k8s::Quantity> sized_default(const Nodes& nodes, std::string_view resource,
                                           const k8s::Quantity& per_gpu, const std::string& gpu_resource,
                                           std::int64_t gpus) {
  using k8s::Int128;
  std::optional<Int128> share;  // in milli-units
  for (const ClusterSnapshot::NodeGroup& g : nodes.groups) {
    const auto& allocatable = nodes.cluster->nodes[g.first].allocatable;
    const auto have = allocatable.find(resource);
    const auto node_gpus = allocatable.find(gpu_resource);
    std::int64_t gpus_here = node_gpus == allocatable.end() ? 0 : node_gpus->second.units_ceil();
    if (gpu_resource.empty()) {
      const auto dra = nodes.dra_gpus.find(g.first);
      gpus_here = dra == nodes.dra_gpus.end() ? 0 : dra->second;
    }
    if (have == allocatable.end() || gpus_here <= 0) continue;
    const Int128 node_share = Int128{have->second.milli_ceil()} * 9 / (Int128{10} * gpus_here);
    if (!share || node_share < *share) share = node_share;
  }
  if (!share) return std::nullopt;
  const bool is_cpu = resource == "cpu";
  Int128 total = std::min(Int128{per_gpu.milli_ceil()}, *share) * gpus;
  constexpr Int128 kMiMilli = Int128{1000} << 20;
  constexpr Int128 kGiMilli = Int128{1000} << 30;
  const Int128 step = is_cpu ? 100 : (total >= kGiMilli ? kGiMilli : kMiMilli);
  total = std::min<Int128>(total / step * step, std::numeric_limits<std::int64_t>::max());
  if (total <= 0) return std::nullopt;
  return k8s::Quantity::from_milli(static_cast<std::int64_t>(total), is_cpu
                                                                         ? k8s::Quantity::Format::kDecimalSI
                                                                         : k8s::Quantity::Format::kBinarySI);
}

// A stanza to make Guaranteed: a container's resources, or the pod-level ones (`container` null). Its name
// and fields are written only when a fix or a finding needs them, and its part is copied for editing only
// when there is something to fix, so a pod already Guaranteed costs neither.
struct Stanza {
  const k8s::ResourceRequirements& resources;
  const k8s::Container* container;
  std::int64_t gpus;

  [[nodiscard]] std::string who() const {
    return container != nullptr ? describe(*container) : "the pod-level resources";
  }
  // What findings name.
  [[nodiscard]] std::string field() const {
    return container != nullptr ? field_of(*container) : "spec.resources";
  }
  // What fixes name, with ".limits.cpu" and the like after it.
  [[nodiscard]] std::string resources_field() const {
    return container != nullptr ? field_of(*container, ".resources") : "spec.resources";
  }
  [[nodiscard]] nlohmann::json& edit(RuleContext& ctx) const {
    return ctx.edit(container != nullptr ? container_part(*container, "resources") : spec_part("resources"));
  }
};

// One resource of a stanza as written.
struct Resource {
  std::string name;  // cpu or memory
  const k8s::Quantity* request;
  const k8s::Quantity* limit;
};

// What gpuadmit does about one resource, decided before anything is written or said.
struct Fine {};   // Guaranteed as it is, or once the API server defaults the request to the limit
struct Unfixed {  // reported under the rule's action
  enum class Why { kNoLimit, kRequestAboveLimit, kRequestBelowLimit, kUnset };
  Why why;
};
// A fix gpuadmit chose not to make because it could leave the pod fitting no node (the pod as written
// still schedules): reported as a warning.
struct HeldBack {
  enum class Why { kNoViewToRaise, kNoNodeToRaise, kLimitFitsNoNode, kNoViewToSize, kNoNodeToSize };
  Why why;
  k8s::Quantity figure;  // the largest node's amount (kLimitFitsNoNode), or the policy's suggestion (…ToSize)
};
struct Fix {
  enum class Edit { kSetLimit, kRaiseRequest, kLowerLimit, kSetBoth };
  Edit edit;
  k8s::Quantity value;   // kSetBoth: the request and limit
  bool bounded = false;  // kSetBoth: the policy's default lowered to what the nodes hold
  bool apps = false;     // kSetBoth: an init container given the app containers' total
};
using Step = std::variant<Fine, Unfixed, HeldBack, Fix>;

// What every decision for one pod reads.
struct Judge {
  const GuaranteedQos& cfg;
  bool fix;  // the action is enforce
  // Sizes are chosen for resources the pod leaves unset: not on a partial pod, whose runtime's container
  // brings its own (a value written here would replace it).
  bool size_unset;
  const Nodes& nodes;
  const std::string& gpu_resource;
};

// A request below its limit.
Step decide_below(const Judge& j, const Resource& r) {
  const bool raise = j.cfg.strategy == QosStrategy::kRaiseRequests;
  if (raise) {
    // The scheduler places by requests: a raised one must still fit a node the pod could use. Both
    // webhooks hold back alike, so /validate does not deny what /mutate chose to leave. With no view, or
    // no node in it that can run the pod, a request raised to the limit might fit no node (a limit may
    // exceed every node's allocatable; the request is what must fit).
    const auto largest = j.nodes.cluster != nullptr ? j.nodes.largest(r.name) : std::nullopt;
    if (!largest) {
      return HeldBack{
          j.nodes.cluster == nullptr ? HeldBack::Why::kNoViewToRaise : HeldBack::Why::kNoNodeToRaise, {}};
    }
    if (*r.limit > *largest) return HeldBack{HeldBack::Why::kLimitFitsNoNode, *largest};
  }
  if (!j.fix || j.cfg.strategy == QosStrategy::kDeny) return Unfixed{Unfixed::Why::kRequestBelowLimit};
  return Fix{raise ? Fix::Edit::kRaiseRequest : Fix::Edit::kLowerLimit, {}};
}

// Neither request nor limit: per-GPU defaults for GPU stanzas, bounded by the nodes the pod could use; the
// "other" defaults for the rest. Without a view gpuadmit cannot know what fits, and chooses no size.
Step decide_unset(const Judge& j, const Resource& r, std::int64_t gpus) {
  const bool is_cpu = r.name == "cpu";
  const k8s::Quantity& per_gpu = is_cpu ? j.cfg.cpu_per_gpu : j.cfg.memory_per_gpu;
  const k8s::Quantity& other = is_cpu ? j.cfg.cpu_other : j.cfg.memory_other;
  const k8s::Quantity suggestion = gpus > 0 ? per_gpu.times(gpus) : other;
  if (j.nodes.cluster == nullptr) return HeldBack{HeldBack::Why::kNoViewToSize, suggestion};
  const std::optional<k8s::Quantity> value =
      gpus > 0 ? sized_default(j.nodes, r.name, per_gpu, j.gpu_resource, gpus) : std::optional(other);
  if (!value) return HeldBack{HeldBack::Why::kNoNodeToSize, suggestion};
  if (!j.fix || !j.size_unset) return Unfixed{Unfixed::Why::kUnset};
  return Fix{Fix::Edit::kSetBoth, *value, gpus > 0 && *value < suggestion};
}

Step decide(const Judge& j, const Resource& r, std::int64_t gpus) {
  if (r.request != nullptr && r.limit != nullptr) {
    if (*r.request == *r.limit) return Fine{};
    if (*r.request > *r.limit) return Unfixed{Unfixed::Why::kRequestAboveLimit};
    return decide_below(j, r);
  }
  if (r.limit != nullptr) return Fine{};  // the API server defaults the request to the limit
  if (r.request != nullptr) {
    return j.fix ? Step{Fix{Fix::Edit::kSetLimit, {}}} : Step{Unfixed{Unfixed::Why::kNoLimit}};
  }
  return decide_unset(j, r, gpus);
}

std::string below_text(const Resource& r) {
  return r.name + " request " + r.request->to_string() + " is below its limit " + r.limit->to_string();
}

std::string unfixed_text(const Resource& r, Unfixed::Why why) {
  switch (why) {
    case Unfixed::Why::kNoLimit:
      return r.name + " has a request (" + r.request->to_string() + ") but no limit";
    case Unfixed::Why::kRequestAboveLimit:
      return r.name + " request " + r.request->to_string() + " exceeds its limit " + r.limit->to_string();
    case Unfixed::Why::kRequestBelowLimit:
      return below_text(r);
    case Unfixed::Why::kUnset:
      break;
  }
  return r.name + " has neither request nor limit";
}

std::string held_back_text(const Resource& r, const HeldBack& h) {
  const std::string figure = h.figure.to_string();
  switch (h.why) {
    case HeldBack::Why::kNoViewToRaise:
    case HeldBack::Why::kNoNodeToRaise:
      return below_text(r) + "; " +
             (h.why == HeldBack::Why::kNoViewToRaise ? "with no cluster view"
                                                     : "with no node that can run it in view") +
             " gpuadmit cannot tell whether a node holds the limit, so it left it: raise the request to " +
             r.limit->to_string() + " if a node has that much " + r.name;
    case HeldBack::Why::kLimitFitsNoNode:
      return below_text(r) +
             "; raised to the limit it would fit no node that can run this pod (the largest has " + figure +
             " " + r.name + "), so gpuadmit left it: lower the limit to at most " + figure;
    case HeldBack::Why::kNoViewToSize:
      return r.name +
             " has neither request nor limit; with no cluster view gpuadmit cannot tell what a node holds "
             "and "
             "sets no size (the policy suggests " +
             figure + ")";
    case HeldBack::Why::kNoNodeToSize:
      break;
  }
  return r.name +
         " has neither request nor limit; no node that can run this pod is in view (a GPU pool at zero "
         "nodes?), so gpuadmit sets no size (the policy suggests " +
         figure + ")";
}

// Short enough for a kubectl Warning after "guaranteed-qos: GPU pod left Burstable (container "x"): ".
std::string summary_of(const Resource& r, const HeldBack& h) {
  switch (h.why) {
    case HeldBack::Why::kNoViewToRaise:
      return r.name + " request < limit, no view to check a node holds the limit";
    case HeldBack::Why::kNoNodeToRaise:
      return r.name + " request < limit, no node for it in view to check the limit";
    case HeldBack::Why::kLimitFitsNoNode:
      return r.name + " limit " + r.limit->to_string() + " > any node for it (" + h.figure.to_string() + ")";
    case HeldBack::Why::kNoViewToSize:
      return r.name + " unset, no view to size it; policy suggests " + h.figure.to_string();
    case HeldBack::Why::kNoNodeToSize:
      break;
  }
  return r.name + " unset, no node for it in view; policy suggests " + h.figure.to_string();
}

void apply(RuleContext& ctx, const Stanza& s, const Resource& r, const Fix& fix) {
  const std::string& res = r.name;
  switch (fix.edit) {
    case Fix::Edit::kSetLimit: {
      const std::string request = r.request->to_string();
      s.edit(ctx)["limits"][res] = request;
      ctx.fixed(s.resources_field() + ".limits." + res,
                "set " + s.who() + " " + res + " limit to its request " + request);
      return;
    }
    case Fix::Edit::kRaiseRequest:
      s.edit(ctx)["requests"][res] = r.limit->to_string();
      ctx.fixed(s.resources_field() + ".requests." + res, "raised " + s.who() + " " + res + " request from " +
                                                              r.request->to_string() + " to its limit " +
                                                              r.limit->to_string());
      return;
    case Fix::Edit::kLowerLimit:
      s.edit(ctx)["limits"][res] = r.request->to_string();
      ctx.fixed(s.resources_field() + ".limits." + res, "lowered " + s.who() + " " + res + " limit from " +
                                                            r.limit->to_string() + " to its request " +
                                                            r.request->to_string());
      return;
    case Fix::Edit::kSetBoth: {
      const std::string value = fix.value.to_string();
      nlohmann::json& resources = s.edit(ctx);
      resources["requests"][res] = value;
      resources["limits"][res] = value;
      ctx.fixed(s.resources_field(), "set " + s.who() + " " + res + " request and limit to " + value);
      return;
    }
  }
}

// What a stanza was given from the policy's defaults, said once: "had no cpu/memory; gpuadmit set cpu 8,
// memory 32Gi (policy default per GPU)".
struct Defaulted {
  std::vector<std::pair<std::string, std::string>> values;  // resource, value
  bool bounded = false;                                     // one was lowered to what the nodes hold
  bool apps = false;                                        // an init container given the apps' total
};

void notice_defaults(RuleContext& ctx, const Stanza& s, const Defaulted& defaulted) {
  std::string set;
  for (const auto& [resource, value] : defaulted.values)
    set += (set.empty() ? "" : ", ") + resource + " " + value;
  if (defaulted.apps) {
    // It runs before the app containers, so their total reserves nothing more.
    ctx.notice("guaranteed-qos: " + s.who() + " set to the app containers' total (" + set +
               "), as it runs first");
    return;
  }
  ctx.notice("guaranteed-qos: " + s.who() + " had no " +
             (defaulted.values.size() > 1 ? "cpu/memory" : defaulted.values.front().first) +
             "; gpuadmit set " + set +
             (s.gpus == 0         ? " (policy default)"
              : defaulted.bounded ? " (sized to fit the nodes)"
                                  : " (policy default per GPU)"));
}

// One stanza's decisions, made before anything is written: the pod is edited only when every step of every
// stanza ends Guaranteed (a fix that does not reach its goal is only risk).
struct Plan {
  Stanza stanza;
  std::array<Resource, 2> resources;
  std::array<Step, 2> steps;
};

Plan plan_of(const Judge& j, const Stanza& s) {
  Plan plan{s, {}, {}};
  for (std::size_t i = 0; i < kQosResources.size(); ++i) {
    const char* name = kQosResources[i];
    plan.resources[i] =
        Resource{name, quantity_of(s.resources.requests, name), quantity_of(s.resources.limits, name)};
    plan.steps[i] = decide(j, plan.resources[i], s.gpus);
  }
  return plan;
}

// What resource `i` of a stanza amounts to once its step is taken (requests equal limits then).
std::optional<k8s::Quantity> settled(const Plan& p, std::size_t i) {
  const Resource& r = p.resources[i];
  if (const auto* fix = std::get_if<Fix>(&p.steps[i])) {
    switch (fix->edit) {
      case Fix::Edit::kSetLimit:
      case Fix::Edit::kLowerLimit:
        return *r.request;
      case Fix::Edit::kRaiseRequest:
        return *r.limit;
      case Fix::Edit::kSetBoth:
        return fix->value;
    }
  }
  if (std::holds_alternative<Fine>(p.steps[i])) return r.limit != nullptr ? *r.limit : *r.request;
  return std::nullopt;
}

// An init container that set nothing is given the sum of the app containers' settled sizes: it runs before
// them, so the pod's effective request (the larger of that sum and any init container) does not grow, and it
// gets as much as the pod itself will hold. A model downloader is never capped at the "other" default.
void size_init_containers(std::vector<Plan>& plans) {
  for (std::size_t i = 0; i < kQosResources.size(); ++i) {
    std::optional<k8s::Quantity> apps;
    bool known = true;
    for (const Plan& p : plans) {
      if (p.stanza.container == nullptr || p.stanza.container->kind != k8s::ContainerKind::kRegular) continue;
      const std::optional<k8s::Quantity> size = settled(p, i);
      if (!size)
        known = false;
      else
        apps = apps ? *apps + *size : *size;
    }
    if (!known || !apps || *apps <= k8s::Quantity{}) continue;
    for (Plan& p : plans) {
      const bool unset = p.resources[i].request == nullptr && p.resources[i].limit == nullptr;
      if (p.stanza.container == nullptr || p.stanza.container->kind != k8s::ContainerKind::kInit || !unset ||
          p.stanza.gpus > 0)
        continue;
      if (std::holds_alternative<Fix>(p.steps[i]) || std::holds_alternative<HeldBack>(p.steps[i]))
        p.steps[i] = Fix{Fix::Edit::kSetBoth, *apps, false, true};
    }
  }
}

bool reaches_guaranteed(const std::vector<Plan>& plans) {
  return std::all_of(plans.begin(), plans.end(), [](const Plan& p) {
    return std::all_of(p.steps.begin(), p.steps.end(), [](const Step& s) {
      return std::holds_alternative<Fine>(s) || std::holds_alternative<Fix>(s);
    });
  });
}

// "would set memory request and limit to 512Mi": a fix held back because the pod would stay Burstable.
std::string would_text(const Resource& r, const Fix& fix) {
  switch (fix.edit) {
    case Fix::Edit::kSetLimit:
      return "would set the " + r.name + " limit to its request " + r.request->to_string();
    case Fix::Edit::kRaiseRequest:
      return "would raise the " + r.name + " request to its limit " + r.limit->to_string();
    case Fix::Edit::kLowerLimit:
      return "would lower the " + r.name + " limit to its request " + r.request->to_string();
    case Fix::Edit::kSetBoth:
      break;
  }
  return "would set " + r.name + " request and limit to " + fix.value.to_string();
}

void apply_plan(RuleContext& ctx, const Plan& p) {
  Defaulted defaulted;
  for (std::size_t i = 0; i < kQosResources.size(); ++i) {
    const auto* fix = std::get_if<Fix>(&p.steps[i]);
    if (fix == nullptr) continue;
    apply(ctx, p.stanza, p.resources[i], *fix);
    if (fix->edit != Fix::Edit::kSetBoth) continue;
    defaulted.values.emplace_back(p.resources[i].name, fix->value.to_string());
    defaulted.bounded = defaulted.bounded || fix->bounded;
    defaulted.apps = defaulted.apps || fix->apps;
  }
  if (!defaulted.values.empty()) notice_defaults(ctx, p.stanza, defaulted);
}

// The finding for what is left: what, why, and the stanza to write.
void report_shortfall(RuleContext& ctx, Action action, const std::vector<std::string>& problems,
                      const std::string& first_field, std::string summary) {
  if (problems.empty()) return;
  std::string message = "this GPU pod would run with QoS class " +
                        std::string(k8s::to_string(k8s::compute_qos(ctx.pod()))) +
                        ", not Guaranteed. Under memory pressure the kubelet evicts Burstable pods first, so "
                        "a training run can be "
                        "killed hours in, losing the work since its last checkpoint.\n";
  for (const auto& p : problems) message += "  - " + p + "\n";
  message +=
      "Fix: give every container (init containers and sidecars too) cpu and memory requests equal to "
      "its limits, for example:\n    resources:\n      requests: {cpu: \"8\", memory: 32Gi}\n"
      "      limits:   {cpu: \"8\", memory: 32Gi}";
  ctx.report(action, first_field, std::move(message), std::move(summary));
}

// One line per stanza: `who: problem; problem`, and the first stanza's field.
struct Problems {
  std::vector<std::string> lines;
  std::string first_field;

  void add(const Stanza& stanza, const std::vector<std::string>& issues) {
    if (issues.empty()) return;
    if (first_field.empty()) first_field = stanza.field();
    std::string line = stanza.who() + ": ";
    for (std::size_t i = 0; i < issues.size(); ++i) line += (i > 0 ? "; " : "") + issues[i];
    lines.push_back(std::move(line));
  }
};

// What /validate says of a fix /mutate would have made: the same finding as when fixes are off.
Unfixed::Why unmade(const Fix& fix) {
  switch (fix.edit) {
    case Fix::Edit::kSetLimit:
      return Unfixed::Why::kNoLimit;
    case Fix::Edit::kRaiseRequest:
    case Fix::Edit::kLowerLimit:
      return Unfixed::Why::kRequestBelowLimit;
    case Fix::Edit::kSetBoth:
      break;
  }
  return Unfixed::Why::kUnset;
}

bool any_held_back(const std::vector<Plan>& plans) {
  return std::any_of(plans.begin(), plans.end(), [](const Plan& p) {
    return std::any_of(p.steps.begin(), p.steps.end(),
                       [](const Step& s) { return std::holds_alternative<HeldBack>(s); });
  });
}

// Says what is left when the pod is not edited: what is wrong under the rule's action, and, as a warning,
// what was held back together with the fixes left unmade because the pod would still be Burstable. On
// /validate (`fixing` false) the fixes /mutate would have made are findings, as when fixes are off.
void report_plans(RuleContext& ctx, Action action, const std::vector<Plan>& plans, bool fixing) {
  const bool held_back_any = any_held_back(plans);
  Problems unfixed;
  Problems held_back;
  std::string held_back_summary;
  bool summary_from_gpus = false;
  for (const Plan& p : plans) {
    std::vector<std::string> wrong;
    std::vector<std::string> held;
    for (std::size_t i = 0; i < kQosResources.size(); ++i) {
      const Resource& r = p.resources[i];
      if (const auto* u = std::get_if<Unfixed>(&p.steps[i])) {
        wrong.push_back(unfixed_text(r, u->why));
      } else if (const auto* h = std::get_if<HeldBack>(&p.steps[i])) {
        held.push_back(held_back_text(r, *h));
        // The summary names a GPU stanza's first when there is one: an init container's "500m" is not
        // what a GPU container needs.
        if (held_back_summary.empty() || (p.stanza.gpus > 0 && !summary_from_gpus)) {
          held_back_summary = "(" + p.stanza.who() + "): " + summary_of(r, *h);
          summary_from_gpus = p.stanza.gpus > 0;
        }
      } else if (const auto* fix = std::get_if<Fix>(&p.steps[i])) {
        if (held_back_any) {
          held.push_back(would_text(r, *fix) + ", but the pod would still not be Guaranteed");
        } else if (!fixing) {
          wrong.push_back(unfixed_text(r, unmade(*fix)));
        }
      }
    }
    unfixed.add(p.stanza, wrong);
    held_back.add(p.stanza, held);
  }
  if (!unfixed.lines.empty()) {
    report_shortfall(ctx, action, unfixed.lines, unfixed.first_field,
                     "GPU pod is not Guaranteed QoS (" + unfixed.lines.front() + ")");
  }
  if (held_back_any) {
    report_shortfall(ctx, std::min(action, Action::kWarn), held_back.lines, held_back.first_field,
                     "GPU pod left Burstable " + held_back_summary);
  }
}

}  // namespace

void rule_guaranteed_qos(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const GuaranteedQos& cfg = ctx.rules().guaranteed_qos;
  const k8s::Pod& pod = ctx.pod();
  const k8s::ResourceList gpus = gpu_requests(ctx);
  Nodes nodes{eligible_gpu_groups(ctx), ctx.cluster(), {}};
  if (gpus.empty() && ctx.cluster() != nullptr) {
    for (const auto& [group, devices] : ctx.dra_gpu_nodes()) nodes.dra_gpus.emplace(group.first, devices);
  }
  const std::string gpu_resource = gpus.empty() ? std::string() : gpus.begin()->first;
  // The plan is /mutate's on both webhooks, so /validate does not deny what /mutate chose to leave.
  const bool enforce = cfg.action == Action::kEnforce;
  const bool whole = !ctx.partial();
  const Judge judge{cfg, enforce, enforce && whole, nodes, gpu_resource};
  // Pod-level resources are the pod's, which a partial pod's runtime completes: said, not written.
  const Judge pod_judge{cfg, enforce && whole, enforce && whole, nodes, gpu_resource};
  std::vector<Plan> plans;
  if (pod.pod_resources) {
    plans.push_back(plan_of(pod_judge, {*pod.pod_resources, nullptr, ctx.gpu_units()}));
  } else {
    plans.reserve(pod.containers.size());
    for (const k8s::Container& c : pod.containers)
      plans.push_back(plan_of(judge, {c.resources, &c, ctx.gpu_units(c)}));
    if (judge.size_unset) size_init_containers(plans);
  }
  // Edited only when the edit makes the pod Guaranteed: a fix that does not reach its goal is only risk.
  if (ctx.can_fix() && reaches_guaranteed(plans)) {
    for (const Plan& p : plans) apply_plan(ctx, p);
    return;
  }
  report_plans(ctx, cfg.action, plans, ctx.can_fix());
}

void read_guaranteed_qos(ParameterReader& r, RuleSet& rules) {
  GuaranteedQos& p = rules.guaranteed_qos;
  r.action("action", p.action);
  r.choice<QosStrategy>("strategy",
                        {{"raise-requests", QosStrategy::kRaiseRequests},
                         {"lower-limits", QosStrategy::kLowerLimits},
                         {"deny", QosStrategy::kDeny}},
                        p.strategy);
  if (ParameterReader* defaults = r.section("defaults")) {
    defaults->quantity("cpuPerGpu", p.cpu_per_gpu);
    defaults->quantity("memoryPerGpu", p.memory_per_gpu);
    defaults->quantity("cpuOtherContainers", p.cpu_other);
    defaults->quantity("memoryOtherContainers", p.memory_other);
  }
}

}  // namespace gpuadmit::policy
