// node-fit: a pod no node can ever run is denied at admission with a scheduler-like breakdown, instead of
// sitting Pending with "0/N nodes are available".
#include <algorithm>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "../node_pool_fit.hpp"
#include "../readable_quantity.hpp"
#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"
#include "gpuadmit/policy/gpu_share.hpp"

namespace gpuadmit::policy {
namespace {

// What the pod asks of the node it runs on: its effective requests and a pod slot. Candidates come from the
// index of its first GPU resource; the other nodes lack it outright.
struct Demand {
  k8s::ResourceList wanted;
  std::optional<std::string> gpu;
};

Demand demand_of(const RuleContext& ctx) {
  Demand demand{effective_requests(ctx.pod()), std::nullopt};
  // HAMi's and Volcano's GPU shares (nvidia.com/gpumem, volcano.sh/vgpu-cores, ...) are placed by their own
  // scheduler, which tells kube-scheduler to ignore them: no node's allocatable holds them, on a cluster
  // where such pods run.
  // Alibaba's share is in nodes' allocatable and counted: weighed like a GPU, as the scheduler does.
  erase_if(demand.wanted, [](const auto& e) {
    return !(e.second > k8s::Quantity{}) ||
           (is_gpu_share_resource(e.first) && !is_node_counted_share(e.first));
  });
  demand.wanted["pods"] = k8s::Quantity::from_units(1);
  auto gpu = std::find_if(demand.wanted.begin(), demand.wanted.end(),
                          [&](const auto& e) { return ctx.rules().is_gpu_resource(e.first); });
  if (gpu == demand.wanted.end()) {
    gpu = std::find_if(demand.wanted.begin(), demand.wanted.end(),
                       [](const auto& e) { return is_node_counted_share(e.first); });
  }
  if (gpu != demand.wanted.end()) demand.gpu = gpu->first;
  return demand;
}

// How many nodes offer the pod's GPU resource.
std::size_t offering(const ClusterSnapshot& cluster, const Demand& demand) {
  if (!demand.gpu) return 0;
  const auto it = cluster.nodes_by_resource.find(*demand.gpu);
  return it != cluster.nodes_by_resource.end() ? it->second.size() : 0;
}

// A string that begins a longer one sorts after it ("48" before "4"), as if each ended in a character above
// those of resource names and quantities: the order in which ties in the breakdown have always listed.
std::weak_ordering longer_first(std::string_view a, std::string_view b) {
  const std::size_t common = std::min(a.size(), b.size());
  if (const int c = a.substr(0, common).compare(b.substr(0, common)); c != 0) return c <=> 0;
  return b.size() <=> a.size();
}

// Why one node cannot run the pod. Nodes with equal reasons are counted together; groups of the same size
// list in the order of these alternatives, then of their fields.
struct Cordoned {
  auto operator<=>(const Cordoned&) const = default;
};
struct Unmatched {   // the pod's node selector or required node affinity
  std::string term;  // what the node does not match: "nodeSelector pool=a (present: b, c)"
  auto operator<=>(const Unmatched&) const = default;
};
struct NotReady {
  auto operator<=>(const NotReady&) const = default;
};
struct Short {  // allocatable capacity, not current use: the node could not run the pod even when empty
  // Every resource the node has too little of, as the scheduler lists each ("Insufficient memory,
  // Insufficient nvidia.com/gpu"): one alone would hide a GPU shortfall behind memory.
  std::string resources;  // "cpu", "cpu and memory"
  std::string available;  // "7910m cpu", "7910m cpu and 25.85Gi memory"
  std::string asked;      // "8", "8 cpu and 32Gi memory"
  friend std::weak_ordering operator<=>(const Short& a, const Short& b) {
    if (const auto c = longer_first(a.resources, b.resources); c != 0) return c;
    if (const auto c = longer_first(a.available, b.available); c != 0) return c;
    return a.asked <=> b.asked;
  }
  friend bool operator==(const Short&, const Short&) = default;
};
struct Untolerated {
  std::string taint;  // key[=value]:effect
  auto operator<=>(const Untolerated&) const = default;
};
using Miss = std::variant<Cordoned, Unmatched, NotReady, Short, Untolerated>;

// Per label key, the values the cluster has ("a100, t4", or "none"): computing them scans every node, so
// once per key, not per node (a selector nobody matches would otherwise cost nodes² label lookups).
using PresentValues = std::map<std::string, std::string, std::less<>>;

const std::string& present_values(const ClusterSnapshot& cluster, const std::string& key,
                                  PresentValues& cache) {
  if (const auto cached = cache.find(key); cached != cache.end()) return cached->second;
  // Nodes of a group share every label but the hostname: one node per group tells the other values.
  std::set<std::string> values;
  const auto add = [&](const k8s::Node& n) {
    if (const auto label = n.labels.find(key); label != n.labels.end()) values.insert(label->second);
  };
  if (key == "kubernetes.io/hostname") {
    for (const k8s::Node& n : cluster.nodes) add(n);
  } else {
    for (const ClusterSnapshot::NodeGroup& g : cluster.node_groups) add(cluster.nodes[g.first]);
  }
  std::string list;
  for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
  return cache.emplace(key, list.empty() ? "none" : list).first->second;
}

Unmatched unmatched(const k8s::Pod& pod, const k8s::Node& node, const ClusterSnapshot& cluster,
                    PresentValues& present) {
  for (const auto& [key, value] : pod.node_selector) {
    const auto it = node.labels.find(key);
    if (it != node.labels.end() && it->second == value) continue;
    return {"nodeSelector " + key + "=" + value + " (present: " + present_values(cluster, key, present) +
            ")"};
  }
  return {"the pod's required node affinity"};
}

std::optional<Short> short_of(const k8s::Node& node, const Demand& demand) {
  std::optional<Short> out;
  std::string first_name;
  for (const auto& [name, amount] : demand.wanted) {
    const auto have = node.allocatable.find(name);
    const k8s::Quantity available = have == node.allocatable.end() ? k8s::Quantity{} : have->second;
    if (!(available < amount)) continue;
    if (!out) {
      out = Short{name, readable(available) + " " + name, amount.to_string()};
      first_name = name;
    } else {
      if (out->resources == first_name) out->asked += " " + first_name;
      out->resources += " and " + name;
      out->available += " and " + readable(available) + " " + name;
      out->asked += " and " + amount.to_string() + " " + name;
    }
  }
  return out;
}

// Why `node` cannot run the pod, in the scheduler's filter order (TaintToleration, NodeAffinity,
// NodeResourcesFit); nothing when it can.
std::optional<Miss> miss_of(const k8s::Node& node, const k8s::Pod& pod, const Demand& demand,
                            const ClusterSnapshot& cluster, PresentValues& present) {
  if (node.unschedulable) return Cordoned{};
  if (!node.ready) return NotReady{};
  const auto taint = std::find_if(node.taints.begin(), node.taints.end(), [&](const k8s::Taint& t) {
    return k8s::blocks_scheduling(t) && !k8s::tolerated_by_any(pod.tolerations, t);
  });
  if (taint != node.taints.end()) {
    return Untolerated{taint->key + (taint->value.empty() ? "" : "=" + taint->value) + ":" + taint->effect};
  }
  if (!k8s::node_selector_matches(pod, node)) return unmatched(pod, node, cluster, present);
  return short_of(node, demand);
}

// How many nodes miss for each reason, or nothing when a node can run the pod. One check per group of
// indistinguishable nodes (ClusterSnapshot::NodeGroup), weighted by its size; node by node only when the
// pod singles nodes out by name, which groups do not keep apart.
std::optional<std::map<Miss, std::size_t>> misses_of(const ClusterSnapshot& cluster, const k8s::Pod& pod,
                                                     const Demand& demand) {
  std::map<Miss, std::size_t> out;
  if (!demand.gpu) return out;
  PresentValues present;
  for (const auto& [i, weight] : candidate_units(cluster, *demand.gpu, pod)) {
    std::optional<Miss> miss = miss_of(cluster.nodes[i], pod, demand, cluster, present);
    if (!miss) return std::nullopt;
    out[std::move(*miss)] += weight;
  }
  return out;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// One entry of the breakdown: "2 nodes are cordoned".
struct Phrase {
  std::size_t count;

  [[nodiscard]] std::string nodes() const { return plural(count, "node", "nodes"); }
  std::string operator()(const Cordoned&) const {
    return nodes() + (count == 1 ? " is" : " are") + " cordoned";
  }
  std::string operator()(const NotReady&) const {
    return nodes() + (count == 1 ? " is" : " are") + " not Ready";
  }
  std::string operator()(const Unmatched& m) const {
    return nodes() + (count == 1 ? " does " : " do ") + "not match " + m.term;
  }
  std::string operator()(const Untolerated& m) const {
    return nodes() + (count == 1 ? " has" : " have") + " the taint " + m.taint +
           ", which the pod does not tolerate";
  }
  std::string operator()(const Short& m) const {
    return nodes() + (count == 1 ? " has " : " have ") + m.available + ", the pod asks for " + m.asked;
  }
};

// Why no node fits, largest groups first; `lacking` is how many nodes lack the pod's GPUs, and `lack` says
// it of them ("nodes lack nvidia.com/gpu").
std::string breakdown(const ClusterSnapshot& cluster, std::size_t lacking, const std::string& lack,
                      const std::map<Miss, std::size_t>& misses) {
  if (cluster.nodes.empty()) return "the cluster has no nodes";
  std::vector<std::pair<std::size_t, std::string>> groups;
  if (lacking > 0) groups.emplace_back(lacking, lack);
  for (const auto& [miss, count] : misses) groups.emplace_back(count, std::visit(Phrase{count}, miss));
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (const auto& [count, text] : groups) out += (out.empty() ? "" : "; ") + text;
  return out;
}

void report_no_node_offers(RuleContext& ctx, const ClusterSnapshot& cluster, const std::string& gpu) {
  const Action action = std::min(ctx.rules().node_fit.action, ctx.rules().node_fit.no_node_offers);
  ctx.report(
      action, "spec",
      "no node offers " + gpu + " right now (" + plural(cluster.nodes.size(), "node", "nodes") +
          " in the cluster). If a node pool scales up from zero (cluster-autoscaler, Karpenter), the pod "
          "waits Pending until a node arrives; otherwise it waits forever.\nFix: check that the GPU node "
          "pool exists and can scale, or that the resource name is right.",
      "no node offers " + gpu + " now; the pod stays Pending until a GPU node pool scales up");
}

// A selector or required affinity that no node of the cluster matches may name an autoscaled pool at zero
// nodes (a Karpenter NodePool, a cluster-autoscaler node group, a GKE ComputeClass) that another pool's
// nodes say nothing about: unsure, so it gets noNodeOffers' action, as a GPU no node offers does.
bool matches_no_node(const ClusterSnapshot& cluster, const k8s::Pod& pod) {
  if (pod.node_selector.empty() && !pod.has_required_affinity) return false;
  return std::none_of(cluster.nodes.begin(), cluster.nodes.end(),
                      [&](const k8s::Node& node) { return k8s::node_selector_matches(pod, node); });
}

void report_no_node_matches(RuleContext& ctx, const ClusterSnapshot& cluster) {
  const Action action = std::min(ctx.rules().node_fit.action, ctx.rules().node_fit.no_node_offers);
  PresentValues present;
  const std::string term =
      cluster.nodes.empty() ? "its selector" : unmatched(ctx.pod(), cluster.nodes[0], cluster, present).term;
  ctx.report(
      action, "spec",
      "no node matches " + term + " right now (" + plural(cluster.nodes.size(), "node", "nodes") +
          " in the cluster). If an autoscaled node pool with those labels is at zero nodes (a Karpenter "
          "NodePool, a cluster-autoscaler node group, a GKE ComputeClass), it scales up for this pod; "
          "otherwise the pod waits Pending forever.\nFix: check that such a pool exists and can scale, or "
          "correct the selector.",
      "no node matches " + term + " now; the pod stays Pending until a pool with those labels scales up");
}

// "cpu 8, memory 32Gi, nvidia.com/gpu 2", or `none` when the pod asks for nothing a node counts.
std::string asks_of(const Demand& demand, const char* none = "") {
  std::string asks;
  for (const auto& [name, amount] : demand.wanted) {
    if (name != "pods") asks += (asks.empty() ? "" : ", ") + name + " " + amount.to_string();
  }
  return asks.empty() ? none : asks;
}

// No node runs the pod now, but an autoscaler may add one: not a certain Pending, so noNodeOffers' action.
void report_autoscaler_may_add(RuleContext& ctx, const std::string& breakdown, const std::string& may,
                               const std::string& fix, const std::string& summary) {
  const Action action = std::min(ctx.rules().node_fit.action, ctx.rules().node_fit.no_node_offers);
  ctx.report(
      action, "spec",
      "no node can run this pod right now: " + breakdown + ". " + may + ", it waits forever.\nFix: " + fix,
      "no node can run this pod now; " + summary);
}

// A Karpenter NodePool may launch a node for the pod (gpu-tolerations tolerates its taints too).
void report_pool_may_launch(RuleContext& ctx, const Demand& demand, const std::string& breakdown,
                            const k8s::NodePool& pool) {
  report_autoscaler_may_add(
      ctx, breakdown,
      "Karpenter's NodePool " + pool.name +
          " may launch one for it (the pod tolerates its taints and its labels and requirements allow the "
          "pod's selector), so the pod waits Pending until that node is up; if none of the pool's instance "
          "types has " +
          asks_of(demand, "what the pod needs"),
      "check that NodePool " + pool.name + " offers such instances, or ask for what one running node has.",
      "Karpenter's NodePool " + pool.name + " may launch one for it");
}

// The pod selects a GKE ComputeClass: GKE creates nodes sized for it, or scales the class's pools at zero.
void report_class_may_create(RuleContext& ctx, const Demand& demand, const std::string& breakdown,
                             const std::string& compute_class) {
  report_autoscaler_may_add(
      ctx, breakdown,
      "The pod selects GKE's ComputeClass " + compute_class +
          ", whose autoscaler may create a node for it from the class's priorities, so the pod waits Pending "
          "until that node is up; if no machine the class allows has " +
          asks_of(demand, "what the pod needs") +
          " (or node pool auto-creation is off and no pool of the class does)",
      "check that ComputeClass " + compute_class + " offers such machines (kubectl get computeclass " +
          compute_class + " -o yaml), or ask for what one running node has.",
      "GKE's ComputeClass " + compute_class + " may create one for it");
}

// `gpus`: what one node must hold of the pod's GPUs (a DRA pod's claims: at least one).
void report_no_node_fits(RuleContext& ctx, const Demand& demand, const std::string& breakdown,
                         std::int64_t gpus) {
  const PoolFit fit = pool_that_could_launch(*ctx.cluster(), ctx.pod(), demand.wanted, gpus);
  if (fit.pool != nullptr) {
    report_pool_may_launch(ctx, demand, breakdown, *fit.pool);
    return;
  }
  if (const std::string compute_class = compute_class_of(ctx.pod()); !compute_class.empty()) {
    report_class_may_create(ctx, demand, breakdown, compute_class);
    return;
  }
  const std::string asks = asks_of(demand);
  // A DRA pod may ask for no cpu or memory at all: then only taints, labels and devices keep it off.
  const std::string why = asks.empty() ? "No node could run it even when empty"
                                       : "The pod asks for " + asks +
                                             " (allocatable capacity counts, not current use: no node could "
                                             "run it even when empty)";
  // On a Karpenter cluster, why none of its NodePools launches a node for it either (at most a few named).
  std::string pools;
  constexpr std::size_t kPoolsNamed = 4;
  for (std::size_t i = 0; i < fit.why_not.size() && i < kPoolsNamed; ++i)
    pools += (i == 0 ? "" : "; ") + fit.why_not[i].first + ": " + fit.why_not[i].second;
  if (fit.why_not.size() > kPoolsNamed)
    pools += "; and " + plural(fit.why_not.size() - kPoolsNamed, "more", "more");
  if (!pools.empty()) pools = "\nNo Karpenter NodePool would launch one (" + pools + ").";
  ctx.report(
      ctx.rules().node_fit.action, "spec",
      "no node can run this pod: " + breakdown + ".\n" + why + ", so the scheduler would leave it Pending." +
          pools +
          "\nFix: ask for what one node has, relax the node selector or affinity, or add the toleration the "
          "GPU nodes need.",
      "no node can run this pod: " + breakdown);
}

// A pod whose GPUs come from DRA claims only: dra-claims judges whether the devices can be allocated; here,
// whether a node that has them takes the pod's cpu, memory, taints and selector. No such node at all is
// dra-claims' to say.
void judge_dra_pod(RuleContext& ctx, const ClusterSnapshot& cluster) {
  const Demand demand = demand_of(ctx);
  std::map<Miss, std::size_t> misses;
  std::size_t with_devices = 0;
  PresentValues present;
  for (const auto& [group, devices] : ctx.dra_gpu_nodes()) {
    std::optional<Miss> miss = miss_of(cluster.nodes[group.first], ctx.pod(), demand, cluster, present);
    if (!miss) return;
    misses[std::move(*miss)] += group.count;
    with_devices += group.count;
  }
  if (with_devices == 0) return;
  const std::size_t lacking = cluster.nodes.size() - with_devices;
  report_no_node_fits(
      ctx, demand,
      breakdown(cluster, lacking,
                plural(lacking, "node has", "nodes have") + " no device the claims could have", misses),
      1);
}

}  // namespace

void rule_node_fit(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr) return;
  if (!ctx.needs_gpu_node()) return;
  if (gpu_requests(ctx).empty() && !asks_for_node_counted_share(ctx.pod())) {
    judge_dra_pod(ctx, *cluster);
    return;
  }
  const Demand demand = demand_of(ctx);
  const std::size_t offered = offering(*cluster, demand);
  if (demand.gpu && offered == 0) {
    report_no_node_offers(ctx, *cluster, *demand.gpu);
    return;
  }
  const auto found = misses_of(*cluster, ctx.pod(), demand);
  if (!found) return;  // a node can run the pod
  if (matches_no_node(*cluster, ctx.pod())) {
    report_no_node_matches(ctx, *cluster);
    return;
  }
  const std::size_t lacking = demand.gpu ? cluster->nodes.size() - offered : 0;
  const std::string lack = plural(lacking, "node lacks ", "nodes lack ") + demand.gpu.value_or("");
  // Whole GPUs, rounded up without overflow: milli_ceil saturates at INT64_MAX for absurd amounts.
  const std::int64_t milli = demand.gpu ? demand.wanted.at(*demand.gpu).milli_ceil() : 0;
  const std::int64_t gpus = milli / 1000 + (milli % 1000 != 0 ? 1 : 0);
  report_no_node_fits(ctx, demand, breakdown(*cluster, lacking, lack, *found), gpus);
}

void read_node_fit(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.node_fit.action);
  r.action("noNodeOffers", rules.node_fit.no_node_offers);
}

}  // namespace gpuadmit::policy
