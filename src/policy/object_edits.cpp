#include "object_edits.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "json_diff.hpp"

namespace gpuadmit::policy {
namespace {

using nlohmann::json;
using Scope = k8s::PodPart::Scope;

std::string_view scope_key(const k8s::PodPart& part) {
  return part.scope == Scope::kMetadata ? "metadata" : "spec";
}

// The object that holds the part's member: the spec, the metadata or a container; nullptr when absent.
template <class J>
const J* holder_of(const J& object, const k8s::PodPart& part) {
  if (!object.is_object()) return nullptr;
  const J* scope = k8s::lookup(object, scope_key(part));
  if (scope == nullptr || !scope->is_object()) return nullptr;
  if (part.scope != Scope::kContainer) return scope;
  const J* list = k8s::lookup(*scope, part.array);
  if (list == nullptr || !list->is_array() || part.index >= list->size()) return nullptr;
  const J& container = (*list)[part.index];
  return container.is_object() ? &container : nullptr;
}

template <class J>
const J* find_part(const J& object, const k8s::PodPart& part) {
  const J* holder = holder_of(object, part);
  return holder != nullptr ? k8s::lookup(*holder, part.member) : nullptr;
}

std::string pointer_of(const k8s::PodPart& part) {
  // The diff appends member names below the part ("/resources/limits/nvidia.com~1gpu"): one allocation.
  constexpr std::size_t kRoom = 96;
  std::string path;
  path.reserve(kRoom);
  k8s::append_pointer_token(path, scope_key(part));
  if (part.scope == Scope::kContainer) {
    k8s::append_pointer_token(path, part.array);
    path += '/';
    path += std::to_string(part.index);
  }
  k8s::append_pointer_token(path, part.member);
  return path;
}

// The order in which a whole-object diff (diff_object in json_diff.cpp) would reach each part: spec before
// metadata; in the spec and in a container, members the source has in key order, then added members in key
// order; containers by index. Metadata members in key order (the audit trail's diff walks them that way).
template <class J>
auto order_key(const k8s::PodPart& part, const J* before) {
  const bool added = before == nullptr;
  switch (part.scope) {
    case Scope::kSpec:
      return std::make_tuple(0, added, part.member, std::size_t{0}, false, std::string_view());
    case Scope::kContainer:
      return std::make_tuple(0, false, part.array, part.index, added, part.member);
    case Scope::kMetadata:
      break;
  }
  return std::make_tuple(1, false, part.member, std::size_t{0}, false, std::string_view());
}

void add_op(json& patch, const std::string& path, const json& value) {
  patch.push_back(patch_op("add", path, value));
}
template <class J, class Parts>
void patch_from(const J& object, const Parts& parts, json& patch) {
  struct Site {
    const k8s::PodPart* address;
    const json* value;
    const J* before;
    bool appended_only;
  };
  std::vector<Site> sites;
  sites.reserve(parts.size());
  for (const auto& part : parts)
    sites.push_back({&part.address, &part.value, find_part(object, part.address), part.appended_only});
  std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) {
    return order_key(*a.address, a.before) < order_key(*b.address, b.before);
  });

  // With no metadata object at all, the parts of metadata are added as one.
  const J* meta = object.is_object() ? k8s::lookup(object, "metadata") : nullptr;
  const bool no_metadata = meta == nullptr || !meta->is_object();
  json new_metadata = json::object();
  for (const Site& site : sites) {
    if (site.address->scope == Scope::kMetadata && no_metadata) {
      if (!site.value->is_null()) new_metadata[std::string(site.address->member)] = *site.value;
      continue;
    }
    std::string path = pointer_of(*site.address);
    if (site.appended_only) {
      // The source's items are unchanged, so a diff of the whole list would give these adds and nothing else.
      path += "/-";
      for (const json& item : *site.value) add_op(patch, path, item);
    } else if (site.before != nullptr) {
      append_diff(*site.before, *site.value, path, patch);
    } else if (!site.value->is_null()) {  // asked for but never written: nothing to add
      add_op(patch, path, *site.value);
    }
  }
  if (!new_metadata.empty()) add_op(patch, "/metadata", new_metadata);
}

}  // namespace

ObjectEdits::Part* ObjectEdits::find(const k8s::PodPart& address) const {
  const auto it = index_.find(key_of(address));
  return it != index_.end() ? it->second : nullptr;
}

ObjectEdits::Part& ObjectEdits::add(Part part) {
  Part& added = parts_.emplace_back(std::move(part));
  index_.emplace(key_of(added.address), &added);
  return added;
}

json& ObjectEdits::edit(const k8s::PodPart& address) {
  if (Part* part = find(address)) {
    if (part->appended_only) {  // from now on, the whole list
      part->value = whole(*part);
      part->appended_only = false;
    }
    part->stale = true;
    return part->value;
  }
  const k8s::JsonValue* found = find_part(*source_, address);
  json value = found != nullptr ? k8s::to_json(*found) : json();
  return add({address, std::move(value), true}).value;
}

json& ObjectEdits::append(const k8s::PodPart& address) {
  if (Part* part = find(address)) {
    part->stale = true;
    if (!part->value.is_array()) part->value = json::array();
    return part->value.emplace_back();
  }
  const k8s::JsonValue* found = find_part(*source_, address);
  const bool source_list = found != nullptr && found->is_array();
  if (!source_list) {
    json& list = edit(address);
    if (!list.is_array()) list = json::array();
    return list.emplace_back();
  }
  return add({address, json::array(), true, true, 0}).value.emplace_back();
}

json ObjectEdits::whole(const Part& part) const {
  if (!part.appended_only) return part.value;
  const k8s::JsonValue* found = find_part(*source_, part.address);
  json list = found != nullptr ? k8s::to_json(*found) : json::array();
  for (const json& item : part.value) list.push_back(item);
  return list;
}

json ObjectEdits::current(const k8s::PodPart& address) const {
  if (const Part* part = find(address)) return whole(*part);
  const k8s::JsonValue* found = find_part(*source_, address);
  return found != nullptr ? k8s::to_json(*found) : json();
}

Result<bool> ObjectEdits::refresh(k8s::Pod& pod) {
  for (Part& part : parts_) {
    if (!part.stale) continue;
    if (part.appended_only) {
      // Only the items not read yet, onto the end of the typed list.
      const json unread(part.value.begin() + static_cast<std::ptrdiff_t>(part.read_back), part.value.end());
      if (auto read = k8s::parse_pod_part_items(part.address, unread, pod); !read) {
        return read.error();
      }
      part.read_back = part.value.size();
    } else if (auto read = k8s::parse_pod_part(part.address, part.value, pod); !read) {
      return read.error();
    }
    part.stale = false;
  }
  return true;
}

json ObjectEdits::patch() const {
  json patch = json::array();
  patch_from(*source_, parts_, patch);
  return patch;
}

json ObjectEdits::applied() const {
  json out = k8s::to_json(*source_);
  for (const Part& part : parts_) {
    json& scope = out[std::string(scope_key(part.address))];
    json& holder = part.address.scope == Scope::kContainer
                       ? scope[std::string(part.address.array)][part.address.index]
                       : scope;
    const std::string member(part.address.member);
    if (part.value.is_null() && !holder.contains(member)) continue;
    holder[member] = whole(part);
  }
  return out;
}

}  // namespace gpuadmit::policy
