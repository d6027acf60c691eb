// Typed views of the Dynamic Resource Allocation objects (resource.k8s.io/v1): DeviceClass, ResourceSlice,
// ResourceClaim and ResourceClaimTemplate. Only what the dra-claims rule and the GPU counting read is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::k8s {

// A ResourceSlice device attribute: exactly one of int, bool, string or version (kept as written and parsed
// as a semantic version when a selector reads it, as Kubernetes does).
struct VersionText {
  std::string text;
  friend bool operator==(const VersionText&, const VersionText&) = default;
};
using AttributeValue = std::variant<std::int64_t, bool, std::string, VersionText>;

// What a device selector sees of one device. Attribute and capacity names are as the ResourceSlice writes
// them: "domain/name", or "name" for the driver's own domain.
struct DeviceView {
  std::string driver;
  bool allow_multiple_allocations = false;
  std::map<std::string, AttributeValue> attributes;
  std::map<std::string, Quantity> capacity;
  friend bool operator==(const DeviceView&, const DeviceView&) = default;
};

struct Device {
  std::string name;
  // What devices of one slice have in common is one shared view: 8 GPUs that differ only in name and uuid
  // share one, so 5,000 nodes of 8 GPUs hold about 5,000 views, not 40,000. An attribute whose string
  // values tell a slice's devices apart (uuid, a PCI address) lives in `own_attributes` instead; a
  // selector that names one is evaluated against the whole device (full_view).
  std::shared_ptr<const DeviceView> view;
  std::map<std::string, AttributeValue> own_attributes;
  std::vector<Taint> taints;  // spec.devices[].taints: like a node's, effects NoSchedule and NoExecute
  friend bool operator==(const Device& a, const Device& b) {
    return a.name == b.name && a.own_attributes == b.own_attributes && a.taints == b.taints &&
           (a.view == b.view || (a.view && b.view && *a.view == *b.view));
  }
  // The attribute as the slice wrote it (own or shared), or nullptr.
  [[nodiscard]] const AttributeValue* attribute(const std::string& key) const {
    if (const auto it = own_attributes.find(key); it != own_attributes.end()) return &it->second;
    if (const auto it = view->attributes.find(key); it != view->attributes.end()) return &it->second;
    return nullptr;
  }
  // The device with its own attributes put back: what a selector naming them must see.
  [[nodiscard]] DeviceView full_view() const {
    DeviceView out = *view;
    for (const auto& [key, value] : own_attributes) out.attributes.insert_or_assign(key, value);
    return out;
  }
};

struct ResourceSlice {
  std::string name;
  std::string driver;
  std::string pool;
  std::int64_t generation = 0;
  std::string node_name;                        // devices local to one node
  bool all_nodes = false;                       // devices every node can reach
  std::vector<NodeSelectorTerm> node_selector;  // devices the nodes these terms match can reach
  bool per_device_node_selection = false;       // each device names its node; not modelled: ignored
  std::vector<Device> devices;
  bool operator==(const ResourceSlice&) const = default;
};

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, ANDed
  std::string extended_resource_name;  // KEP-5004: a plain extended-resource request served by this class
  bool operator==(const DeviceClass&) const = default;
};

// One way a request can be served: `exactly`, or one entry of `firstAvailable`.
struct DeviceSubRequest {
  std::string name;  // "" for exactly; the subrequest's name otherwise
  std::string device_class;
  std::vector<std::string> selectors;  // CEL expressions, ANDed with the class's
  bool all = false;                    // allocationMode: All
  std::int64_t count = 1;              // allocationMode: ExactCount (the default) with count (default 1)
  bool admin_access = false;
  std::vector<Toleration> tolerations;  // device tolerations
  bool operator==(const DeviceSubRequest&) const = default;
};

struct DeviceRequest {
  std::string name;
  // `exactly` is alternatives[0] alone; `firstAvailable` gives them in order of preference.
  std::vector<DeviceSubRequest> alternatives;
  bool first_available = false;
  bool operator==(const DeviceRequest&) const = default;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: every request
  std::string match_attribute;        // "domain/name"
  bool operator==(const DeviceConstraint&) const = default;
};

struct DeviceClaim {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  bool operator==(const DeviceClaim&) const = default;
};

struct ResourceClaim {
  ObjectMeta meta;
  DeviceClaim spec;
  bool allocated = false;                 // status.allocation set
  std::vector<std::string> reserved_for;  // status.reservedFor[].name
  bool operator==(const ResourceClaim&) const = default;
};

struct ResourceClaimTemplate {
  ObjectMeta meta;
  DeviceClaim spec;  // spec.spec.devices
  bool operator==(const ResourceClaimTemplate&) const = default;
};

}  // namespace gpuadmit::k8s
