// guaranteed-qos: a Burstable GPU pod is evicted first under memory pressure, hours into a training run.
#include <array>
#include <cmath>
#include <limits>
#include <optional>

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
    if (have == allocatable.end() || node_gpus == allocatable.end() || node_gpus->second.units_ceil() <= 0) {
      continue;
    }
    const Int128 node_share =
        Int128{have->second.milli_ceil()} * 9 / (Int128{10} * node_gpus->second.units_ceil());
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

// What one stanza still lacks: `unfixed` under the rule's action; `held_back`, fixes gpuadmit chose not to
// make because they could leave the pod fitting no node (the pod as written still schedules), as warnings.
struct Shortfall {
  std::vector<std::string> unfixed;
  std::vector<std::string> held_back;
  std::string held_back_summary;  // the first held-back fix, short enough for a kubectl Warning
};

// One container (or the pod-level stanza): fixes what the strategy allows and what cannot strand the pod.
// `target` yields the resources stanza to edit; it is called only when there is something to fix, so a pod
// already Guaranteed is never copied.
// `c` is the container, or nullptr for the pod-level stanza; its name and field are written only when a fix
// or a finding needs them.
template <class Target>
Shortfall make_guaranteed(RuleContext& ctx, const k8s::ResourceRequirements& r, const Target& target,
                          const k8s::Container* c, std::int64_t gpus, const Nodes& nodes,
                          const std::string& gpu_resource) {
  const GuaranteedQos& cfg = ctx.rules().guaranteed_qos;
  const bool fix = cfg.action == Action::kEnforce && ctx.can_fix();
  Shortfall out;
  std::string who_text;
  std::string field_text;
  const auto who = [&]() -> const std::string& {
    if (who_text.empty()) who_text = c != nullptr ? describe(*c) : "the pod-level resources";
    return who_text;
  };
  const auto field = [&]() -> const std::string& {
    if (field_text.empty()) field_text = c != nullptr ? field_of(*c) : "spec";
    return field_text;
  };
  std::string defaulted;  // "cpu 8, memory 32Gi": what the policy defaults filled in, for one notice
  bool bounded = false;   // a default was lowered to what the nodes hold
  for (const char* resource : kQosResources) {
    const k8s::Quantity* request = quantity_of(r.requests, resource);
    const k8s::Quantity* limit = quantity_of(r.limits, resource);
    const std::string res(resource);
    if (request != nullptr && limit != nullptr && *request == *limit) continue;
    if (request == nullptr && limit != nullptr) continue;  // the API server defaults the request to the limit
    if (request != nullptr && limit == nullptr) {
      const std::string request_text = request->to_string();
      if (!fix) {
        out.unfixed.push_back(res + " has a request (" + request_text + ") but no limit");
        continue;
      }
      target()["limits"][res] = request_text;
      ctx.fixed(field() + ".resources.limits." + res,
                "set " + who() + " " + res + " limit to its request " + request_text);
      continue;
    }
    if (request != nullptr && limit != nullptr) {
      if (*request > *limit) {
        out.unfixed.push_back(res + " request " + request->to_string() + " exceeds its limit " +
                              limit->to_string());
        continue;
      }
      std::string below =
          res + " request " + request->to_string() + " is below its limit " + limit->to_string();
      if (cfg.strategy == QosStrategy::kRaiseRequests) {
        // The scheduler places by requests: a raised one must still fit a node the pod could use. Both
        // webhooks hold back alike, so /validate does not deny what /mutate chose to leave.
        const auto largest = nodes.cluster != nullptr ? nodes.largest(res) : std::nullopt;
        if (!largest) {
          // No view, or no node that can run the pod in it: a request raised to the limit might fit no node
          // (a limit may exceed every node's allocatable; the request is what must fit), so gpuadmit leaves
          // it.
          const std::string why =
              nodes.cluster == nullptr ? "with no cluster view" : "with no node that can run it in view";
          out.held_back.push_back(
              below + "; " + why +
              " gpuadmit cannot tell whether a node holds the limit, so it left it: raise the "
              "request to " +
              limit->to_string() + " if a node has that much " + res);
          if (out.held_back_summary.empty()) {
            out.held_back_summary =
                res + " request < limit; " + why.substr(5) + " to check a node holds the limit";
          }
          continue;
        }
        if (*limit > *largest) {
          out.held_back.push_back(below +
                                  "; raised to the limit it would fit no node that can run this pod "
                                  "(the largest has " +
                                  largest->to_string() + " " + res +
                                  "), so gpuadmit left it: lower the limit to at most " +
                                  largest->to_string());
          if (out.held_back_summary.empty()) {
            out.held_back_summary = res + " limit " + limit->to_string() +
                                    " is more than any node that can run "
                                    "it has (" +
                                    largest->to_string() + ")";
          }
          continue;
        }
      }
      if (!fix || cfg.strategy == QosStrategy::kDeny) {
        out.unfixed.push_back(std::move(below));
        continue;
      }
      if (cfg.strategy == QosStrategy::kRaiseRequests) {
        target()["requests"][res] = limit->to_string();
        ctx.fixed(field() + ".resources.requests." + res, "raised " + who() + " " + res + " request from " +
                                                              request->to_string() + " to its limit " +
                                                              limit->to_string());
      } else {
        target()["limits"][res] = request->to_string();
        ctx.fixed(field() + ".resources.limits." + res, "lowered " + who() + " " + res + " limit from " +
                                                            limit->to_string() + " to its request " +
                                                            request->to_string());
      }
      continue;
    }
    // Neither set: per-GPU defaults for GPU stanzas, bounded by the nodes the pod could use; the "other"
    // defaults for the rest. Without a view gpuadmit cannot know what fits, and chooses no size.
    const bool is_cpu = res == "cpu";
    const k8s::Quantity& per_gpu = is_cpu ? cfg.cpu_per_gpu : cfg.memory_per_gpu;
    const k8s::Quantity& other = is_cpu ? cfg.cpu_other : cfg.memory_other;
    if (nodes.cluster == nullptr) {
      const std::string suggestion = (gpus > 0 ? per_gpu.times(gpus) : other).to_string();
      out.held_back.push_back(res +
                              " has neither request nor limit; with no cluster view gpuadmit cannot "
                              "tell what a node holds and sets no size (the policy suggests " +
                              suggestion + ")");
      if (out.held_back_summary.empty()) {
        out.held_back_summary =
            res + " unset and no cluster view to size it from; policy suggests " + suggestion;
      }
      continue;
    }
    const std::optional<k8s::Quantity> value =
        gpus > 0 ? sized_default(nodes, res, per_gpu, gpu_resource, gpus) : std::optional(other);
    if (gpus > 0 && value && *value < per_gpu.times(gpus)) bounded = true;
    if (!value) {
      out.held_back.push_back(res +
                              " has neither request nor limit; no node that can run this pod is in "
                              "view (a GPU pool at zero nodes?), so gpuadmit sets no size (the policy "
                              "suggests " +
                              per_gpu.times(gpus).to_string() + ")");
      if (out.held_back_summary.empty()) {
        out.held_back_summary = res + " unset and no node in view to size it from; policy suggests " +
                                per_gpu.times(gpus).to_string();
      }
      continue;
    }
    if (!fix) {
      out.unfixed.push_back(res + " has neither request nor limit");
      continue;
    }
    const std::string value_text = value->to_string();
    nlohmann::json& resources = target();
    resources["requests"][res] = value_text;
    resources["limits"][res] = value_text;
    ctx.fixed(field() + ".resources", "set " + who() + " " + res + " request and limit to " + value_text);
    defaulted += (defaulted.empty() ? "" : ", ") + res + " " + value_text;
  }
  if (!defaulted.empty()) {
    ctx.notice(
        "guaranteed-qos: " + who() + " had no " +
        (defaulted.find(',') != std::string::npos ? "cpu/memory" : defaulted.substr(0, defaulted.find(' '))) +
        "; gpuadmit set " + defaulted +
        (gpus == 0 ? " (policy default)"
         : bounded ? " (sized to fit the nodes)"
                   : " (policy default per GPU)"));
  }
  return out;
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

  void add(const std::string& who, const std::string& field, const std::vector<std::string>& issues) {
    if (issues.empty()) return;
    if (first_field.empty()) first_field = field;
    std::string line = who + ": ";
    for (std::size_t i = 0; i < issues.size(); ++i) line += (i > 0 ? "; " : "") + issues[i];
    lines.push_back(std::move(line));
  }
};

}  // namespace

void rule_guaranteed_qos(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const Action action = ctx.rules().guaranteed_qos.action;
  const k8s::Pod& pod = ctx.pod();
  const Nodes nodes{eligible_gpu_groups(ctx), ctx.cluster()};
  const k8s::ResourceList gpus = gpu_requests(ctx);
  const std::string gpu_resource = gpus.empty() ? std::string() : gpus.begin()->first;
  Problems unfixed;
  Problems held_back;
  std::string held_back_summary;
  const auto collect = [&](const std::string& who, const std::string& field, const Shortfall& s) {
    unfixed.add(who, field, s.unfixed);
    held_back.add(who, field, s.held_back);
    if (held_back_summary.empty()) held_back_summary = s.held_back_summary;
  };
  if (pod.pod_resources) {
    const auto target = [&ctx]() -> nlohmann::json& { return ctx.edit(spec_part("resources")); };
    collect("the pod-level resources", "spec.resources",
            make_guaranteed(ctx, *pod.pod_resources, target, nullptr, ctx.gpu_units(), nodes, gpu_resource));
  } else {
    for (const k8s::Container& c : pod.containers) {
      const auto target = [&ctx, &c]() -> nlohmann::json& {
        return ctx.edit(container_part(c, "resources"));
      };
      collect(describe(c), field_of(c),
              make_guaranteed(ctx, c.resources, target, &c, ctx.gpu_units(c), nodes, gpu_resource));
    }
  }
  if (!unfixed.lines.empty()) {
    report_shortfall(ctx, action, unfixed.lines, unfixed.first_field,
                     "GPU pod is not Guaranteed QoS (" + unfixed.lines.front() + ")");
  }
  if (!held_back.lines.empty()) {
    report_shortfall(ctx, std::min(action, Action::kWarn), held_back.lines, held_back.first_field,
                     "GPU pod left Burstable: " + held_back_summary);
  }
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
