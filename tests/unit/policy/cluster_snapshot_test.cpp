// The snapshot's node groups and indexes, against a brute-force reference: the groups are what node-fit
// checks instead of every node, so a node put in the wrong group is a wrong verdict.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace {

using gpuadmit::k8s::Node;
using gpuadmit::k8s::Quantity;
using gpuadmit::k8s::Taint;
using gpuadmit::policy::ClusterSnapshot;
using gpuadmit::policy::make_snapshot;
using gpuadmit::policy::same_group;

Quantity q(const char* text) {
  return Quantity::parse(text).value();
}

template <class Map>
void drop(Map& map, std::string_view key) {
  erase_if(map, [&](const auto& entry) { return entry.first == key; });
}

Node base(const std::string& name) {
  Node n;
  n.name = name;
  n.labels["kubernetes.io/hostname"] = name;
  n.labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB";
  n.labels["topology.kubernetes.io/zone"] = "europe-west4-a";
  n.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
  n.allocatable["cpu"] = q("96");
  n.allocatable["memory"] = q("1Ti");
  n.allocatable["nvidia.com/gpu"] = q("8");
  return n;
}

}  // namespace

TEST_CASE("two nodes share a group exactly when node-fit cannot tell them apart", "[cluster][groups]") {
  using Edit = void (*)(Node&);
  // what differs in the second node, the same group or not
  auto [what, edit, same] = GENERATE(table<const char*, Edit, bool>({
      {"only the name and hostname", [](Node&) {}, true},
      {"no hostname label at all", [](Node& n) { drop(n.labels, "kubernetes.io/hostname"); }, true},
      {"memory written as 1024Gi instead of 1Ti", [](Node& n) { n.allocatable["memory"] = q("1024Gi"); },
       true},
      {"another zone", [](Node& n) { n.labels["topology.kubernetes.io/zone"] = "b"; }, false},
      {"one label more", [](Node& n) { n.labels["team"] = "ml"; }, false},
      {"one label less", [](Node& n) { drop(n.labels, "nvidia.com/gpu.product"); }, false},
      {"the taint's effect", [](Node& n) { n.taints[0].effect = "NoExecute"; }, false},
      {"no taint", [](Node& n) { n.taints.clear(); }, false},
      {"four GPUs, not eight", [](Node& n) { n.allocatable["nvidia.com/gpu"] = q("4"); }, false},
      {"no GPU resource", [](Node& n) { drop(n.allocatable, "nvidia.com/gpu"); }, false},
      {"cordoned", [](Node& n) { n.unschedulable = true; }, false},
      {"not ready", [](Node& n) { n.ready = false; }, false},
  }));
  const Node a = base("a-0");
  Node b = base("a-1");
  edit(b);
  INFO(what);
  CHECK(same_group(a, b) == same);
  CHECK(same_group(b, a) == same);
  if (same) CHECK(gpuadmit::policy::group_hash(a) == gpuadmit::policy::group_hash(b));
}

TEST_CASE("the groups and indexes of any node list are the ones a brute-force pass finds",
          "[cluster][groups]") {
  // Many small random clusters: nodes drawn from few choices per field, so groups have several members and
  // near misses (one field apart) are common.
  std::mt19937 random(20261202);
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  for (int round = 0; round < 200; ++round) {
    std::vector<Node> nodes;
    const int count = 1 + pick(40);
    for (int i = 0; i < count; ++i) {
      Node n = base("node-" + std::to_string(round) + "-" + std::to_string(i));
      if (pick(3) == 0) n.labels["topology.kubernetes.io/zone"] = "europe-west4-b";
      if (pick(4) == 0) n.labels["pool"] = pick(2) == 0 ? "x" : "y";
      if (pick(4) == 0) n.taints.clear();
      static const char* const kGpus[] = {"0", "1", "4", "8"};
      n.allocatable["nvidia.com/gpu"] = q(kGpus[pick(4)]);
      if (pick(5) == 0) n.allocatable["amd.com/gpu"] = q(pick(2) == 0 ? "2" : "8");
      n.unschedulable = pick(6) == 0;
      n.ready = pick(8) != 0;
      nodes.push_back(std::move(n));
    }
    std::shuffle(nodes.begin(), nodes.end(), random);
    const ClusterSnapshot s = make_snapshot(nodes, {}, {}, {});
    INFO("round " << round << ", " << count << " nodes");

    REQUIRE(s.nodes.size() == nodes.size());
    for (std::size_t i = 1; i < s.nodes.size(); ++i) REQUIRE(s.nodes[i - 1].name < s.nodes[i].name);
    // Reference groups: each node joins the first earlier node it cannot be told apart from.
    std::vector<ClusterSnapshot::NodeGroup> groups;
    std::vector<std::size_t> group_of(s.nodes.size());
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      std::size_t g = 0;
      while (g < groups.size() && !same_group(s.nodes[groups[g].first], s.nodes[i])) ++g;
      if (g == groups.size()) groups.push_back({i, 0});
      ++groups[g].count;
      group_of[i] = g;
    }
    REQUIRE(s.node_groups.size() == groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      CHECK(s.node_groups[g].first == groups[g].first);
      CHECK(s.node_groups[g].count == groups[g].count);
    }
    for (const char* resource : {"nvidia.com/gpu", "amd.com/gpu"}) {
      std::vector<std::size_t> positions;
      std::vector<ClusterSnapshot::NodeGroup> by_resource;
      std::optional<Quantity> largest;
      for (std::size_t i = 0; i < s.nodes.size(); ++i) {
        const Node& n = s.nodes[i];
        const auto it = n.allocatable.find(resource);
        if (it == n.allocatable.end() || !(it->second > Quantity{})) continue;
        positions.push_back(i);
        if (groups[group_of[i]].first == i) by_resource.push_back(groups[group_of[i]]);
        if (!n.unschedulable && n.ready && (!largest || it->second > *largest)) largest = it->second;
      }
      INFO(resource);
      const auto at = s.nodes_by_resource.find(resource);
      CHECK((at == s.nodes_by_resource.end() ? std::vector<std::size_t>{} : at->second) == positions);
      const auto groups_at = s.groups_by_resource.find(resource);
      const std::vector<ClusterSnapshot::NodeGroup> found = groups_at == s.groups_by_resource.end()
                                                                ? std::vector<ClusterSnapshot::NodeGroup>{}
                                                                : groups_at->second;
      REQUIRE(found.size() == by_resource.size());
      for (std::size_t g = 0; g < found.size(); ++g) {
        CHECK(found[g].first == by_resource[g].first);
        CHECK(found[g].count == by_resource[g].count);
      }
      const auto max_at = s.max_allocatable.find(resource);
      CHECK((max_at == s.max_allocatable.end() ? std::nullopt : std::optional(max_at->second)) == largest);
    }
  }
}
