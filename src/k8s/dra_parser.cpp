// The DRA objects as resource.k8s.io/v1 writes them. A slice's devices are read into shared views: devices
// that differ only in name share one (dra_objects.hpp), which is what keeps a 40,000-GPU cluster small.
#include "gpuadmit/k8s/dra_parser.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "field_readers.hpp"

namespace gpuadmit::k8s {
namespace fields {
namespace {

using nlohmann::json;

std::vector<std::string> cel_selectors(const json* list, const Path& path) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Path p = path[i];
    if (const json* cel = object_at((*list)[i], "cel", p))
      out.push_back(string_at(*cel, "expression", p / "cel"));
  }
  return out;
}

std::int64_t integer_at(const json& object, std::string_view key, const Path& path, std::int64_t fallback) {
  const json* value = member(object, key, path);
  if (value == nullptr) return fallback;
  if (!is_integer(*value)) fail(path / key, "an integer", *value);
  return integer(*value);
}

bool bool_at(const json& object, std::string_view key, const Path& path) {
  const json* value = member(object, key, path);
  if (value == nullptr) return false;
  if (!is_boolean(*value)) fail(path / key, "a boolean", *value);
  return boolean(*value);
}

AttributeValue attribute(const json& value, const Path& path) {
  if (!value.is_object()) fail(path, "an object", value);
  if (const json* i = member(value, "int", path)) {
    if (!is_integer(*i)) fail(path / "int", "an integer", *i);
    return integer(*i);
  }
  if (const json* b = member(value, "bool", path)) {
    if (!is_boolean(*b)) fail(path / "bool", "a boolean", *b);
    return boolean(*b);
  }
  if (const json* s = member(value, "string", path)) {
    if (!s->is_string()) fail(path / "string", "a string", *s);
    return s->get<std::string>();
  }
  if (const json* v = member(value, "version", path)) {
    if (!v->is_string()) fail(path / "version", "a string", *v);
    return VersionText{v->get<std::string>()};
  }
  throw FieldError{path.str() + ": expected one of int, bool, string or version", path.pointer()};
}

std::vector<Taint> device_taints(const json* list, const Path& path) {
  std::vector<Taint> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Path p = path[i];
    out.push_back({string_at((*list)[i], "key", p), string_at((*list)[i], "value", p),
                   string_at((*list)[i], "effect", p)});
  }
  return out;
}

DeviceView device_view(const json& device, const std::string& driver, const Path& path) {
  DeviceView view;
  view.driver = driver;
  view.allow_multiple_allocations = bool_at(device, "allowMultipleAllocations", path);
  if (const json* attributes = object_at(device, "attributes", path)) {
    for (const auto& [name, value] : attributes->items()) {
      view.attributes.emplace(name, attribute(value, path / "attributes" / name));
    }
  }
  if (const json* capacity = object_at(device, "capacity", path)) {
    for (const auto& [name, value] : capacity->items()) {
      const Path p = path / "capacity" / name;
      if (!value.is_object()) fail(p, "an object", value);
      if (const json* q = member(value, "value", p)) view.capacity.emplace(name, quantity(*q, p / "value"));
    }
  }
  return view;
}

// Whether an attribute's name says it holds a device's identity: uuid, parentUUID.
bool names_identity(std::string_view name) {
  if (name.size() < 4) return false;
  const std::string_view tail = name.substr(name.size() - 4);
  return std::equal(tail.begin(), tail.end(), "uuid",
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// The string attributes that tell devices apart: those named for an identity (uuid; MIG's parentUUID,
// shared by a GPU's slices), and those whose values differ on every device of the slice (a PCI address):
// kept per device, so that the rest can be shared, here and across nodes alike.
std::set<std::string> identity_attributes(const std::vector<DeviceView>& views) {
  std::set<std::string> out;
  std::map<std::string, std::set<std::string>> values;
  for (const DeviceView& view : views) {
    for (const auto& [name, value] : view.attributes) {
      if (const auto* s = std::get_if<std::string>(&value)) values[name].insert(*s);
    }
  }
  for (const auto& [name, seen] : values) {
    if (names_identity(name) || (views.size() > 1 && seen.size() == views.size())) out.insert(name);
  }
  return out;
}

std::vector<Device> devices(const json* list, const std::string& driver, const Path& path) {
  std::vector<Device> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  std::vector<DeviceView> views;
  views.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Path p = path[i];
    const json& d = (*list)[i];
    if (!d.is_object()) fail(p, "an object", d);
    Device device;
    device.name = string_at(d, "name", p);
    device.taints = device_taints(array_at(d, "taints", p), p / "taints");
    views.push_back(device_view(d, driver, p));
    out.push_back(std::move(device));
  }
  const std::set<std::string> identity = identity_attributes(views);
  std::vector<std::shared_ptr<const DeviceView>> seen;  // a slice holds a few distinct views at most
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (const std::string& name : identity) {
      auto node = views[i].attributes.extract(name);
      if (!node.empty()) out[i].own_attributes.insert(std::move(node));
    }
    const auto same = std::find_if(seen.begin(), seen.end(), [&](const auto& v) { return *v == views[i]; });
    if (same != seen.end()) {
      out[i].view = *same;
    } else {
      out[i].view = std::make_shared<const DeviceView>(std::move(views[i]));
      seen.push_back(out[i].view);
    }
  }
  return out;
}

ResourceSlice parse_slice_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourceslice", "an object", object);
  ResourceSlice slice;
  slice.name = parse_meta(object, root).name;
  const json* spec = object_at(object, "spec", root);
  if (spec == nullptr) return slice;
  const Path sp = root / "spec";
  slice.driver = string_at(*spec, "driver", sp);
  if (const json* pool = object_at(*spec, "pool", sp)) {
    slice.pool = string_at(*pool, "name", sp / "pool");
    slice.generation = integer_at(*pool, "generation", sp / "pool", 0);
  }
  slice.node_name = string_at(*spec, "nodeName", sp);
  slice.all_nodes = bool_at(*spec, "allNodes", sp);
  slice.per_device_node_selection = bool_at(*spec, "perDeviceNodeSelection", sp);
  if (const json* selector = object_at(*spec, "nodeSelector", sp)) {
    slice.node_selector = node_selector_terms(array_at(*selector, "nodeSelectorTerms", sp / "nodeSelector"),
                                              sp / "nodeSelector" / "nodeSelectorTerms");
  }
  slice.devices = devices(array_at(*spec, "devices", sp), slice.driver, sp / "devices");
  return slice;
}

DeviceClass parse_class_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "deviceclass", "an object", object);
  DeviceClass cls;
  cls.name = parse_meta(object, root).name;
  if (const json* spec = object_at(object, "spec", root)) {
    const Path sp = root / "spec";
    cls.selectors = cel_selectors(array_at(*spec, "selectors", sp), sp / "selectors");
    cls.extended_resource_name = string_at(*spec, "extendedResourceName", sp);
  }
  return cls;
}

DeviceSubRequest sub_request(const json& object, const Path& path) {
  DeviceSubRequest out;
  out.name = string_at(object, "name", path);
  out.device_class = string_at(object, "deviceClassName", path);
  out.selectors = cel_selectors(array_at(object, "selectors", path), path / "selectors");
  out.all = string_at(object, "allocationMode", path) == "All";
  out.count = integer_at(object, "count", path, 1);
  out.admin_access = bool_at(object, "adminAccess", path);
  out.tolerations = parse_tolerations(array_at(object, "tolerations", path), path / "tolerations");
  return out;
}

DeviceClaim device_claim(const json* spec, const Path& path) {
  DeviceClaim claim;
  if (spec == nullptr) return claim;
  const json* devices_spec = object_at(*spec, "devices", path);
  if (devices_spec == nullptr) return claim;
  const Path dp = path / "devices";
  if (const json* requests = array_at(*devices_spec, "requests", dp)) {
    for (std::size_t i = 0; i < requests->size(); ++i) {
      const Path p = (dp / "requests")[i];
      const json& r = (*requests)[i];
      if (!r.is_object()) fail(p, "an object", r);
      DeviceRequest request;
      request.name = string_at(r, "name", p);
      if (const json* exactly = object_at(r, "exactly", p)) {
        DeviceSubRequest sub = sub_request(*exactly, p / "exactly");
        sub.name.clear();
        request.alternatives.push_back(std::move(sub));
      }
      if (const json* first = array_at(r, "firstAvailable", p)) {
        request.first_available = true;
        for (std::size_t j = 0; j < first->size(); ++j)
          request.alternatives.push_back(sub_request((*first)[j], (p / "firstAvailable")[j]));
      }
      claim.requests.push_back(std::move(request));
    }
  }
  if (const json* constraints = array_at(*devices_spec, "constraints", dp)) {
    for (std::size_t i = 0; i < constraints->size(); ++i) {
      const Path p = (dp / "constraints")[i];
      claim.constraints.push_back({string_list(array_at((*constraints)[i], "requests", p), p / "requests"),
                                   string_at((*constraints)[i], "matchAttribute", p)});
    }
  }
  return claim;
}

ResourceClaim parse_resource_claim_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourceclaim", "an object", object);
  ResourceClaim claim;
  claim.meta = parse_meta(object, root);
  claim.spec = device_claim(object_at(object, "spec", root), root / "spec");
  if (const json* status = object_at(object, "status", root)) {
    const Path st = root / "status";
    claim.allocated = object_at(*status, "allocation", st) != nullptr;
    if (const json* reserved = array_at(*status, "reservedFor", st)) {
      for (std::size_t i = 0; i < reserved->size(); ++i)
        claim.reserved_for.push_back(string_at((*reserved)[i], "name", (st / "reservedFor")[i]));
    }
  }
  return claim;
}

ResourceClaimTemplate parse_template_or_throw(const json& object) {
  const Path root;
  if (!object.is_object()) fail(root / "resourceclaimtemplate", "an object", object);
  ResourceClaimTemplate out;
  out.meta = parse_meta(object, root);
  if (const json* spec = object_at(object, "spec", root)) {
    out.spec = device_claim(object_at(*spec, "spec", root / "spec"), root / "spec" / "spec");
  }
  return out;
}

}  // namespace
}  // namespace fields

Result<DeviceClass> parse_device_class(const nlohmann::json& object) {
  return fields::guarded<DeviceClass>([&] { return fields::parse_class_or_throw(object); });
}

Result<ResourceSlice> parse_resource_slice(const nlohmann::json& object) {
  return fields::guarded<ResourceSlice>([&] { return fields::parse_slice_or_throw(object); });
}

Result<ResourceClaim> parse_resource_claim(const nlohmann::json& object) {
  return fields::guarded<ResourceClaim>([&] { return fields::parse_resource_claim_or_throw(object); });
}

Result<ResourceClaimTemplate> parse_resource_claim_template(const nlohmann::json& object) {
  return fields::guarded<ResourceClaimTemplate>([&] { return fields::parse_template_or_throw(object); });
}

}  // namespace gpuadmit::k8s
