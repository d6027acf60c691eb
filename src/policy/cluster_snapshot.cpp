#include "gpuadmit/policy/cluster_snapshot.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/cluster_object_parser.hpp"

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

// Everything node-fit reads of a node except its name and hostname label, as one string. Quantities are
// written as given, so 1Ti and 1024Gi make two groups: harmless, only slightly less sharing.
std::string group_signature(const k8s::Node& node) {
  std::string out;
  out += node.unschedulable ? 'U' : 'u';
  out += node.ready ? 'R' : 'r';
  for (const auto& [key, value] : node.labels) {
    if (key == "kubernetes.io/hostname") continue;
    out.append(key).push_back('\x01');
    out.append(value).push_back('\x02');
  }
  out.push_back('\x03');
  for (const k8s::Taint& t : node.taints) {
    out.append(t.key).push_back('\x01');
    out.append(t.value).push_back('\x01');
    out.append(t.effect).push_back('\x02');
  }
  out.push_back('\x03');
  for (const auto& [name, amount] : node.allocatable) {
    out.append(name).push_back('\x01');
    out.append(amount.to_string()).push_back('\x02');
  }
  return out;
}

}  // namespace

ClusterSnapshot make_snapshot(std::vector<k8s::Node> nodes, std::vector<k8s::ResourceQuota> quotas,
                              std::vector<k8s::StorageClass> storage_classes,
                              std::vector<k8s::PersistentVolumeClaim> claims) {
  ClusterSnapshot s;
  s.nodes = std::move(nodes);
  s.quotas = std::move(quotas);
  s.storage_classes = std::move(storage_classes);
  s.claims = std::move(claims);
  // Stable order whatever order the API server listed them in: messages and tests must not depend on it.
  std::sort(s.nodes.begin(), s.nodes.end(),
            [](const k8s::Node& a, const k8s::Node& b) { return a.name < b.name; });
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const k8s::Node& node = s.nodes[i];
    for (const auto& [name, amount] : node.allocatable) {
      if (!(amount > k8s::Quantity{})) continue;
      s.nodes_by_resource[name].push_back(i);
      if (node.unschedulable || !node.ready) continue;
      auto [it, inserted] = s.max_allocatable.try_emplace(name, amount);
      if (!inserted && amount > it->second) it->second = amount;
    }
  }
  // Groups: one signature per node, equal signatures share a group id.
  std::unordered_map<std::string, std::size_t> group_ids;
  std::vector<std::size_t> group_of(s.nodes.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const auto [it, inserted] = group_ids.try_emplace(group_signature(s.nodes[i]), group_ids.size());
    if (inserted) s.node_groups.push_back({i, 0});
    group_of[i] = it->second;
    ++s.node_groups[it->second].count;
  }
  for (const auto& [name, positions] : s.nodes_by_resource) {
    std::vector<ClusterSnapshot::NodeGroup>& groups = s.groups_by_resource[name];
    std::unordered_map<std::size_t, std::size_t> slot;  // group id → position in `groups`
    for (const std::size_t i : positions) {
      const auto [it, inserted] = slot.try_emplace(group_of[i], groups.size());
      if (inserted) groups.push_back({i, 0});
      ++groups[it->second].count;
    }
  }
  return s;
}

Result<ClusterSnapshot> snapshot_from_list(const nlohmann::json& list) {
  std::vector<k8s::Node> nodes;
  std::vector<k8s::ResourceQuota> quotas;
  std::vector<k8s::StorageClass> classes;
  std::vector<k8s::PersistentVolumeClaim> claims;
  const auto add = [&](const nlohmann::json& item) -> Result<bool> {
    if (!item.is_object()) return make_error("list item is not an object");
    const std::string kind = item.value("kind", std::string());
    const auto where = [&](const std::string& message) {
      const auto meta = item.find("metadata");
      const std::string name =
          meta != item.end() && meta->is_object() ? meta->value("name", std::string()) : "";
      return make_error(kind + " \"" + name + "\": " + message);
    };
    if (kind == "Node") {
      auto n = k8s::parse_node(item);
      if (!n) return where(n.error().message);
      nodes.push_back(std::move(*n));
    } else if (kind == "ResourceQuota") {
      auto q = k8s::parse_resource_quota(item);
      if (!q) return where(q.error().message);
      quotas.push_back(std::move(*q));
    } else if (kind == "StorageClass") {
      auto c = k8s::parse_storage_class(item);
      if (!c) return where(c.error().message);
      classes.push_back(std::move(*c));
    } else if (kind == "PersistentVolumeClaim") {
      auto c = k8s::parse_persistent_volume_claim(item);
      if (!c) return where(c.error().message);
      claims.push_back(std::move(*c));
    }
    return true;
  };
  if (list.is_object() && list.contains("items")) {
    if (!list["items"].is_array()) return make_error("items: expected a list");
    for (const auto& item : list["items"]) {
      if (auto r = add(item); !r) return r.error();
    }
  } else if (auto r = add(list); !r) {
    return r.error();
  }
  return make_snapshot(std::move(nodes), std::move(quotas), std::move(classes), std::move(claims));
}

}  // namespace gpuadmit::policy
