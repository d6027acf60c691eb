// The member readers the object parsers share (pod_parser.cpp, cluster_object_parser.cpp): typed access to
// the members of an object, each mismatch thrown as a FieldError that names the field's path. Templates over
// the two forms an object arrives in: a JsonDocument value (the pod under review) and nlohmann::json (the
// parts a fix edits, the cluster's objects). Private to the k8s layer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/k8s/objects.hpp"
#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::k8s::fields {

// Internal only: thrown deep inside the walk and turned into a Result by guarded, at the public functions.
struct FieldError {
  std::string message;
  std::string pointer;  // the field's JSON Pointer (Error::pointer)
};

// A field path built on the stack and rendered only when an error needs it: parsing a pod must not pay for
// strings nobody reads (it runs after every mutation on the request path). A Path points at its parent:
// a path kept in a variable must be built from named paths, never from a temporary.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  std::size_t index = std::string_view::npos;

  [[nodiscard]] Path operator/(std::string_view child) const { return Path{this, child}; }
  [[nodiscard]] Path operator[](std::size_t i) const { return Path{this, {}, i}; }

  [[nodiscard]] std::string str() const {
    std::string out = parent != nullptr ? parent->str() : std::string();
    if (index != std::string_view::npos) return out + "[" + std::to_string(index) + "]";
    if (!out.empty() && !key.empty()) out += '.';
    out += key;
    return out;
  }
  [[nodiscard]] std::string pointer() const {
    std::string out = parent != nullptr ? parent->pointer() : std::string();
    if (index != std::string_view::npos) {
      out += '/';
      return out + std::to_string(index);
    }
    if (!key.empty()) append_pointer_token(out, key);
    return out;
  }
};

template <class J>
[[noreturn]] void fail(const Path& path, const char* expected, const J& got) {
  throw FieldError{path.str() + ": expected " + expected + ", got " + type_name(got), path.pointer()};
}

// Returns the member or nullptr when absent or null (Kubernetes treats both as unset).
template <class J>
const J* member(const J& object, std::string_view key, const Path& path) {
  if (!object.is_object()) fail(path, "an object", object);
  const J* value = lookup(object, key);
  if (value == nullptr || value->is_null()) return nullptr;
  return value;
}

template <class J>
std::string string_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value == nullptr) return {};
  if (!value->is_string()) fail(path / key, "a string", *value);
  return std::string(text(*value));
}

template <class J>
const J* object_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value != nullptr && !value->is_object()) fail(path / key, "an object", *value);
  return value;
}

template <class J>
const J* array_at(const J& object, std::string_view key, const Path& path) {
  const J* value = member(object, key, path);
  if (value != nullptr && !value->is_array()) fail(path / key, "a list", *value);
  return value;
}

// A part's value read on its own (parse_pod_part): null is absent, like a null member.
template <class J>
const J* as_object(const J& value, const Path& path) {
  if (value.is_null()) return nullptr;
  if (!value.is_object()) fail(path, "an object", value);
  return &value;
}

template <class J>
const J* as_array(const J& value, const Path& path) {
  if (value.is_null()) return nullptr;
  if (!value.is_array()) fail(path, "a list", value);
  return &value;
}

template <class J>
StringMap string_map(const J* object, const Path& path) {
  StringMap out;
  if (object == nullptr) return out;
  // Walks the map itself: nlohmann's items() copies two strings per step, and this runs per re-parse.
  out.reserve(object->size());
  for (const auto& [key, value] : entries(*object)) {
    if (!value.is_string()) fail(path / key, "a string", value);
    out.append(key, std::string(text(value)));  // members come sorted
  }
  return out;
}

template <class J>
std::vector<std::string> string_list(const J* list, const Path& path) {
  std::vector<std::string> out;
  if (list == nullptr) return out;
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) fail(path[i], "a string", (*list)[i]);
    out.emplace_back(text((*list)[i]));
  }
  return out;
}

template <class J>
Quantity quantity(const J& value, const Path& path) {
  // The API server accepts numbers too (Quantity.UnmarshalJSON); users' YAML often has them.
  Result<Quantity> parsed = make_error("");
  if (value.is_null()) {
    parsed = Quantity{};  // `nvidia.com/gpu:` left empty: Quantity.UnmarshalJSON reads null as 0
  } else if (value.is_string()) {
    parsed = Quantity::parse(text(value));
  } else if (is_number(value)) {
    parsed = Quantity::parse(number_text(value));
  } else {
    fail(path, R"(a quantity such as "2" or "16Gi")", value);
  }
  if (!parsed) throw FieldError{path.str() + ": " + parsed.error().message, path.pointer()};
  return *parsed;
}

template <class J>
ResourceList resource_list(const J* list, const Path& path) {
  ResourceList out;
  if (list == nullptr) return out;
  if (!list->is_object()) fail(path, "an object", *list);
  out.reserve(list->size());
  for (const auto& [name, value] : entries(*list)) {
    out.append(name, quantity(value, path / name));  // members come sorted
  }
  return out;
}

template <class J>
ResourceRequirements requirements(const J* resources, const Path& path) {
  ResourceRequirements out;
  if (resources == nullptr) return out;
  out.requests = resource_list(object_at(*resources, "requests", path), path / "requests");
  out.limits = resource_list(object_at(*resources, "limits", path), path / "limits");
  if (const J* claims = array_at(*resources, "claims", path)) {
    out.claims.reserve(claims->size());
    for (std::size_t i = 0; i < claims->size(); ++i) {
      const Path p = (path / "claims")[i];
      if (!(*claims)[i].is_object()) fail(p, "an object", (*claims)[i]);
      out.claims.push_back({string_at((*claims)[i], "name", p), string_at((*claims)[i], "request", p)});
    }
  }
  return out;
}

template <class J>
ObjectMeta parse_meta(const J& object, const Path& root) {
  ObjectMeta meta;
  if (const J* m = object_at(object, "metadata", root)) {
    const Path p = root / "metadata";
    meta.name = string_at(*m, "name", p);
    meta.generate_name = string_at(*m, "generateName", p);
    meta.namespace_ = string_at(*m, "namespace", p);
    meta.labels = string_map(object_at(*m, "labels", p), p / "labels");
    meta.annotations = string_map(object_at(*m, "annotations", p), p / "annotations");
    if (const J* owners = array_at(*m, "ownerReferences", p)) {
      for (std::size_t i = 0; i < owners->size(); ++i) {
        const Path owner_path = (p / "ownerReferences")[i];
        const J& owner = (*owners)[i];
        const std::string kind = string_at(owner, "kind", owner_path);
        const J* controller = member(owner, "controller", owner_path);
        if (controller == nullptr) continue;
        if (!is_boolean(*controller)) fail(owner_path / "controller", "a boolean", *controller);
        if (boolean(*controller)) meta.controller_kind = kind;
      }
    }
  }
  return meta;
}

template <class J>
std::vector<NodeSelectorRequirement> requirements_list(const J* list, const Path& path) {
  std::vector<NodeSelectorRequirement> out;
  if (list == nullptr) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Path p = path[i];
    NodeSelectorRequirement r{string_at((*list)[i], "key", p), string_at((*list)[i], "operator", p), {}};
    r.values = string_list(array_at((*list)[i], "values", p), p / "values");
    out.push_back(std::move(r));
  }
  return out;
}

template <class J>
std::vector<NodeSelectorTerm> node_selector_terms(const J* terms, const Path& path) {
  std::vector<NodeSelectorTerm> out;
  if (terms == nullptr) return out;
  for (std::size_t i = 0; i < terms->size(); ++i) {
    const Path p = path[i];
    out.push_back({requirements_list(array_at((*terms)[i], "matchExpressions", p), p / "matchExpressions"),
                   requirements_list(array_at((*terms)[i], "matchFields", p), p / "matchFields")});
  }
  return out;
}

template <class J>
std::vector<Toleration> parse_tolerations(const J* tolerations, const Path& tolerations_path,
                                          std::size_t first = 0) {
  std::vector<Toleration> out;
  if (tolerations == nullptr) return out;
  out.reserve(tolerations->size());
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const Path p = tolerations_path[first + i];
    const J& t = (*tolerations)[i];
    Toleration toleration{string_at(t, "key", p), string_at(t, "operator", p), string_at(t, "value", p),
                          string_at(t, "effect", p), std::nullopt};
    if (const J* seconds = member(t, "tolerationSeconds", p)) {
      if (!is_integer(*seconds)) fail(p / "tolerationSeconds", "an integer", *seconds);
      toleration.toleration_seconds = integer(*seconds);
    }
    out.push_back(std::move(toleration));
  }
  return out;
}

// What `parse` returns, or its FieldError as an error.
template <typename T, typename F>
Result<T> guarded(F&& parse) {
  try {
    return parse();
  } catch (const FieldError& e) {
    return Error{e.message, e.pointer};
  }
}

}  // namespace gpuadmit::k8s::fields
