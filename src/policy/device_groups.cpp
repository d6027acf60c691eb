// The snapshot's device groups (cluster_dra.hpp): nodes whose devices the DRA checks cannot tell apart, so
// that dra-claims tries one node of a pool of identical GPU nodes instead of each.
#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "cluster_dra.hpp"
#include "dra_devices.hpp"
#include "hash_mix.hpp"

namespace gpuadmit::policy {
namespace {

// What the DRA checks read of a node's devices. Views are compared by content: a --cluster file's slices
// do not share them as the watcher's cache does.
struct DeviceShape {
  std::size_t node_group = 0;
  std::vector<const k8s::ResourceSlice*> slices;
  // Per device, per own attribute (in name order): the position of the first device of the node with an
  // equal value. Nodes whose uuids differ but whose MIG slices share parents alike get equal patterns, and
  // matchAttribute constraints, which only compare values, come out the same on both.
  std::vector<std::uint32_t> own_pattern;
  std::size_t devices = 0;
  std::size_t hash = 0;
};

class ViewHashes {
 public:
  std::size_t operator()(const k8s::DeviceView* view) {
    auto [it, inserted] = hashes_.try_emplace(view, 0);
    if (inserted) {
      const std::hash<std::string_view> text;
      std::size_t seed = text(view->driver);
      for (const auto& [name, value] : view->attributes) {
        hash_mix(seed, text(name));
        hash_mix(seed, text(attribute_text(value)));
      }
      it->second = seed;
    }
    return it->second;
  }

 private:
  std::unordered_map<const k8s::DeviceView*, std::size_t> hashes_;
};

DeviceShape shape_of(const ClusterSnapshot& s, std::size_t node, std::size_t node_group, ViewHashes& views) {
  DeviceShape out{node_group, s.slices_for(s.nodes[node]), {}, 0, node_group};
  const std::hash<std::string_view> text;
  std::map<std::pair<std::string_view, std::string>, std::uint32_t> first_seen;
  std::uint32_t position = 0;
  for (const k8s::ResourceSlice* slice : out.slices) {
    out.devices += slice->devices.size();
    if (slice->node_name.empty()) {  // a shared slice: the very same devices for every node reaching it
      hash_mix(out.hash, std::hash<const void*>{}(slice));
      continue;
    }
    hash_mix(out.hash, slice->devices.size());
    for (const k8s::Device& device : slice->devices) {
      hash_mix(out.hash, views(device.view.get()));
      hash_mix(out.hash, device.taints.size());
      for (const auto& [name, value] : device.own_attributes) {
        hash_mix(out.hash, text(name));
        const auto [it, inserted] =
            first_seen.try_emplace({name, std::to_string(value.index()) + attribute_text(value)}, position);
        out.own_pattern.push_back(it->second);
        hash_mix(out.hash, it->second);
      }
      ++position;
    }
  }
  return out;
}

bool same_device(const k8s::Device& a, const k8s::Device& b) {
  if (a.view != b.view && !(a.view && b.view && *a.view == *b.view)) return false;
  if (a.taints != b.taints || a.own_attributes.size() != b.own_attributes.size()) return false;
  return std::equal(a.own_attributes.begin(), a.own_attributes.end(), b.own_attributes.begin(),
                    [](const auto& x, const auto& y) { return x.first == y.first; });
}

bool same_shape(const DeviceShape& a, const DeviceShape& b) {
  if (a.node_group != b.node_group || a.slices.size() != b.slices.size() || a.own_pattern != b.own_pattern)
    return false;
  for (std::size_t i = 0; i < a.slices.size(); ++i) {
    const k8s::ResourceSlice& x = *a.slices[i];
    const k8s::ResourceSlice& y = *b.slices[i];
    if (x.node_name.empty() || y.node_name.empty()) {
      if (&x != &y) return false;
      continue;
    }
    if (!std::equal(x.devices.begin(), x.devices.end(), y.devices.begin(), y.devices.end(), same_device))
      return false;
  }
  return true;
}

}  // namespace

void group_devices(ClusterSnapshot& s, const std::vector<std::size_t>& group_of) {
  if (s.resource_slices.empty()) return;
  for (const k8s::ResourceSlice& slice : s.resource_slices) {
    for (const k8s::Device& device : slice.devices) {
      for (const auto& [name, value] : device.own_attributes)
        s.own_attribute_names.emplace(name.substr(name.rfind('/') + 1));
    }
  }
  ViewHashes views;
  std::vector<DeviceShape> shapes;                                   // group → its first node's shape
  std::unordered_multimap<std::size_t, std::size_t> groups_by_hash;  // hash → group
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    DeviceShape shape = shape_of(s, i, group_of[i], views);
    if (shape.devices == 0) continue;
    std::size_t id = shapes.size();
    for (auto [it, last] = groups_by_hash.equal_range(shape.hash); it != last; ++it) {
      if (same_shape(shape, shapes[it->second])) {
        id = it->second;
        break;
      }
    }
    if (id == shapes.size()) {
      groups_by_hash.emplace(shape.hash, id);
      shapes.push_back(std::move(shape));
      s.device_groups.emplace_back();
    }
    s.device_groups[id].push_back(i);
  }
}

}  // namespace gpuadmit::policy
