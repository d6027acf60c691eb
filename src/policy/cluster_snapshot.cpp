#include "gpuadmit/policy/cluster_snapshot.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "cluster_dra.hpp"
#include "gpuadmit/k8s/cluster_object_parser.hpp"
#include "gpuadmit/k8s/dra_parser.hpp"
#include "hash_mix.hpp"

namespace gpuadmit::policy {

const k8s::StorageClass* ClusterSnapshot::storage_class(std::string_view name) const {
  const auto it = std::find_if(storage_classes.begin(), storage_classes.end(),
                               [&](const k8s::StorageClass& sc) { return sc.name == name; });
  return it == storage_classes.end() ? nullptr : &*it;
}

const k8s::StorageClass* ClusterSnapshot::default_storage_class() const {
  const auto it = std::find_if(storage_classes.begin(), storage_classes.end(),
                               [](const k8s::StorageClass& sc) { return sc.is_default; });
  return it == storage_classes.end() ? nullptr : &*it;
}

const k8s::PersistentVolumeClaim* ClusterSnapshot::claim(std::string_view ns, std::string_view name) const {
  const auto it = std::find_if(claims.begin(), claims.end(), [&](const k8s::PersistentVolumeClaim& c) {
    return c.meta.namespace_ == ns && c.meta.name == name;
  });
  return it == claims.end() ? nullptr : &*it;
}

namespace {

constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";

bool same_labels_but_hostname(const k8s::StringMap& a, const k8s::StringMap& b) {
  auto i = a.begin();
  auto j = b.begin();
  for (;;) {
    while (i != a.end() && i->first == kHostnameLabel) ++i;
    while (j != b.end() && j->first == kHostnameLabel) ++j;
    if (i == a.end() || j == b.end()) return i == a.end() && j == b.end();
    if (*i != *j) return false;
    ++i;
    ++j;
  }
}

// Builds the node groups and their indexes; returns each node's group id.
std::vector<std::size_t> group_nodes(ClusterSnapshot& s);

}  // namespace

bool same_group(const k8s::Node& a, const k8s::Node& b) {
  return a.unschedulable == b.unschedulable && a.ready == b.ready && a.taints == b.taints &&
         a.allocatable == b.allocatable && same_labels_but_hostname(a.labels, b.labels);
}

std::size_t group_hash(const k8s::Node& node) {
  const std::hash<std::string_view> text;
  std::size_t seed = (node.unschedulable ? 2U : 0U) | (node.ready ? 1U : 0U);
  for (const auto& [key, value] : node.labels) {
    if (key == kHostnameLabel) continue;
    hash_mix(seed, text(key));
    hash_mix(seed, text(value));
  }
  for (const k8s::Taint& t : node.taints) {
    hash_mix(seed, text(t.key));
    hash_mix(seed, text(t.value));
    hash_mix(seed, text(t.effect));
  }
  for (const auto& [name, amount] : node.allocatable) {
    hash_mix(seed, text(name));
    hash_mix(seed, static_cast<std::size_t>(amount.milli_ceil()));  // equal quantities, equal hashes
  }
  return seed;
}

ClusterSnapshot make_snapshot(ClusterObjects objects) {
  ClusterSnapshot s;
  s.nodes = std::move(objects.nodes);
  s.quotas = std::move(objects.quotas);
  s.storage_classes = std::move(objects.storage_classes);
  s.claims = std::move(objects.claims);
  s.device_classes = std::move(objects.device_classes);
  s.resource_slices = std::move(objects.resource_slices);
  s.resource_claims = std::move(objects.resource_claims);
  s.claim_templates = std::move(objects.claim_templates);
  s.node_pools = std::move(objects.node_pools);
  s.dra_listed = objects.dra_listed;
  // Stable order whatever order the API server listed them in: messages and tests must not depend on it.
  // The watcher's cache is already in name order, so this is one pass there.
  auto& pointers = s.nodes.pointers();
  const auto by_name = [](const auto& a, const auto& b) { return a->name < b->name; };
  if (!std::is_sorted(pointers.begin(), pointers.end(), by_name))
    std::sort(pointers.begin(), pointers.end(), by_name);
  auto& pools = s.node_pools.pointers();
  if (!std::is_sorted(pools.begin(), pools.end(), by_name)) std::sort(pools.begin(), pools.end(), by_name);
  index_dra(s);  // before the groups: KEP-5004 adds DRA-served extended resources to nodes
  group_devices(s, group_nodes(s));
  return s;
}

ClusterSnapshot make_snapshot(SharedList<k8s::Node> nodes, SharedList<k8s::ResourceQuota> quotas,
                              SharedList<k8s::StorageClass> storage_classes,
                              SharedList<k8s::PersistentVolumeClaim> claims) {
  return make_snapshot(ClusterObjects{std::move(nodes),
                                      std::move(quotas),
                                      std::move(storage_classes),
                                      std::move(claims),
                                      {},
                                      {},
                                      {},
                                      {},
                                      {},
                                      false});
}

namespace {

std::vector<std::size_t> group_nodes(ClusterSnapshot& s) {
  // Groups: nodes node-fit cannot tell apart, found by hash and confirmed field by field.
  std::unordered_multimap<std::size_t, std::size_t> groups_by_hash;  // hash → group id
  std::vector<std::size_t> group_of(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const k8s::Node& node = s.nodes[i];
    const std::size_t hash = group_hash(node);
    std::size_t id = s.node_groups.size();
    for (auto [it, last] = groups_by_hash.equal_range(hash); it != last; ++it) {
      if (same_group(node, s.nodes[s.node_groups[it->second].first])) {
        id = it->second;
        break;
      }
    }
    if (id == s.node_groups.size()) {
      s.node_groups.push_back({i, 0});
      groups_by_hash.emplace(hash, id);
    }
    group_of[i] = id;
    ++s.node_groups[id].count;
  }

  // The indexes, per group: a group's nodes have the same allocatable, cordon and readiness. Groups are in
  // the order of their first node, so each resource's groups are too.
  std::vector<std::vector<std::vector<std::size_t>*>> offered(s.node_groups.size());  // group → its lists
  for (std::size_t id = 0; id < s.node_groups.size(); ++id) {
    const ClusterSnapshot::NodeGroup& group = s.node_groups[id];
    const k8s::Node& node = s.nodes[group.first];
    for (const auto& [name, amount] : node.allocatable) {
      if (!(amount > k8s::Quantity{})) continue;
      offered[id].push_back(&s.nodes_by_resource[name]);
      s.groups_by_resource[name].push_back(group);
      if (node.unschedulable || !node.ready) continue;
      auto [it, inserted] = s.max_allocatable.try_emplace(name, amount);
      if (!inserted && amount > it->second) it->second = amount;
    }
  }
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    for (std::vector<std::size_t>* positions : offered[group_of[i]]) positions->push_back(i);
  }
  return group_of;
}

}  // namespace

ClusterSnapshot make_snapshot(std::vector<k8s::Node> nodes, std::vector<k8s::ResourceQuota> quotas,
                              std::vector<k8s::StorageClass> storage_classes,
                              std::vector<k8s::PersistentVolumeClaim> claims) {
  return make_snapshot(SharedList<k8s::Node>(std::move(nodes)),
                       SharedList<k8s::ResourceQuota>(std::move(quotas)),
                       SharedList<k8s::StorageClass>(std::move(storage_classes)),
                       SharedList<k8s::PersistentVolumeClaim>(std::move(claims)));
}

namespace {

template <class T, class Parse>
Result<bool> add_parsed(SharedList<T>& list, const nlohmann::json& item, Parse parse) {
  auto parsed = parse(item);
  if (!parsed) return parsed.error();
  list.push_back(std::make_shared<const T>(*std::move(parsed)));
  return true;
}

Result<bool> add_object(ClusterObjects& objects, const nlohmann::json& item) {
  if (!item.is_object()) return make_error("list item is not an object");
  const std::string kind = item.value("kind", std::string());
  Result<bool> added = true;
  if (kind == "Node") {
    added = add_parsed(objects.nodes, item, k8s::parse_node);
  } else if (kind == "ResourceQuota") {
    added = add_parsed(objects.quotas, item, k8s::parse_resource_quota);
  } else if (kind == "StorageClass") {
    added = add_parsed(objects.storage_classes, item, k8s::parse_storage_class);
  } else if (kind == "PersistentVolumeClaim") {
    added = add_parsed(objects.claims, item, k8s::parse_persistent_volume_claim);
  } else if (kind == "NodePool" && item.value("apiVersion", std::string()).starts_with("karpenter.sh/")) {
    added = add_parsed(objects.node_pools, item, k8s::parse_node_pool);
  } else if (kind == "DeviceClass" || kind == "ResourceSlice" || kind == "ResourceClaim" ||
             kind == "ResourceClaimTemplate") {
    objects.dra_listed = true;
  }
  if (kind == "DeviceClass") {
    added = add_parsed(objects.device_classes, item, k8s::parse_device_class);
  } else if (kind == "ResourceSlice") {
    added = add_parsed(objects.resource_slices, item, k8s::parse_resource_slice);
  } else if (kind == "ResourceClaim") {
    added = add_parsed(objects.resource_claims, item, k8s::parse_resource_claim);
  } else if (kind == "ResourceClaimTemplate") {
    added = add_parsed(objects.claim_templates, item, k8s::parse_resource_claim_template);
  }
  if (added) return true;
  const auto meta = item.find("metadata");
  const std::string name = meta != item.end() && meta->is_object() ? meta->value("name", std::string()) : "";
  return make_error(kind + " \"" + name + "\": " + added.error().message);
}

}  // namespace

Result<ClusterSnapshot> snapshot_from_list(const nlohmann::json& list) {
  ClusterObjects objects;
  if (list.is_object() && list.contains("items")) {
    if (!list["items"].is_array()) return make_error("items: expected a list");
    for (const auto& item : list["items"]) {
      if (auto r = add_object(objects, item); !r) return r.error();
    }
  } else if (auto r = add_object(objects, list); !r) {
    return r.error();
  }
  return make_snapshot(std::move(objects));
}

}  // namespace gpuadmit::policy
