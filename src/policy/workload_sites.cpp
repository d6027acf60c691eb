#include "workload_sites.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {
namespace {

// A count beyond any cluster's pods: gpu-quota multiplies by it, and must not overflow.
constexpr std::int64_t kMaxReplicas = 1'000'000'000;

// The way down to one template while the path is walked.
struct Trail {
  std::string pointer;
  std::string field;
  std::vector<std::string> list_parts;  // "workerGroupSpecs[gpu-group]"
  std::string glob_key;                 // the last map key a glob matched ("Worker")
  std::string key;                      // every label and glob key, for UPDATE
  const k8s::JsonValue* list_item = nullptr;
  const k8s::JsonValue* parent = nullptr;
};

struct Walk {
  const k8s::JsonValue& root;
  const WorkloadPod& pod;
  std::size_t pod_index;
  TemplateSites& out;
  std::set<std::string> seen;
  bool overflow = false;
};

std::optional<std::int64_t> field_value(const k8s::JsonValue& root, const k8s::JsonValue* anchor,
                                        const FieldRef& ref) {
  const k8s::JsonValue* node = ref.from_root ? &root : anchor;
  for (const std::string& member : ref.members) {
    if (node == nullptr || !node->is_object()) return std::nullopt;
    node = node->find(member);
  }
  if (node == nullptr || !k8s::is_integer(*node)) return std::nullopt;
  return k8s::integer(*node);
}

std::int64_t factor_value(const Factor& f, const k8s::JsonValue& root, const k8s::JsonValue* anchor,
                          std::int64_t absent) {
  const std::int64_t value = f.ref ? field_value(root, anchor, *f.ref).value_or(absent) : f.number;
  // Clamped before the subtraction: a hostile INT64_MIN must not overflow.
  return std::max<std::int64_t>(std::clamp<std::int64_t>(value, 0, kMaxReplicas) - f.minus, 0);
}

std::int64_t replicas_of(const Replicas& r, const k8s::JsonValue& root, const k8s::JsonValue* anchor) {
  if (!r.count) return 1;
  std::int64_t pods = factor_value(*r.count, root, anchor, r.absent);
  if (r.min) pods = std::max(pods, field_value(root, anchor, *r.min).value_or(pods));
  if (r.max) pods = std::min(pods, field_value(root, anchor, *r.max).value_or(pods));
  pods = std::clamp<std::int64_t>(pods, 0, kMaxReplicas);  // a negative bound must not reach the product
  for (const Factor& f : r.times) {
    const std::int64_t times = factor_value(f, root, anchor, 1);
    pods = times != 0 && pods > kMaxReplicas / times ? kMaxReplicas : pods * times;
  }
  return std::clamp<std::int64_t>(pods, 0, kMaxReplicas);
}

void walk(const k8s::JsonValue& node, std::size_t depth, const Trail& trail, Walk& w);

void record_site(const k8s::JsonValue& node, const Trail& trail, Walk& w) {
  if (!node.is_object() || !w.seen.insert(trail.pointer).second) return;
  if (w.out.sites.size() == kMaxTemplatesPerObject) {
    w.overflow = true;
    return;
  }
  TemplateSite site;
  site.pod_template = &node;
  site.pointer = trail.pointer;
  site.field = trail.field;
  site.in_list = !trail.list_parts.empty();
  for (const std::string& part : trail.list_parts) site.tag += (site.tag.empty() ? "" : ".") + part;
  if (site.tag.empty()) site.tag = trail.glob_key.empty() ? w.pod.name : trail.glob_key;
  site.key = std::to_string(w.pod_index) + ":" + trail.key;
  site.source = &w.pod;
  site.anchor = site.in_list ? trail.list_item : trail.parent;
  site.replicas = replicas_of(w.pod.replicas, w.root, site.anchor);
  w.out.sites.push_back(std::move(site));
}

// An item's label: its `key` member (its `name` for [*]) when that is a string, else its index.
std::string label_of(const k8s::JsonValue& item, const PathStep& step, std::size_t index) {
  const std::string_view label = k8s::string_member(item, step.key.empty() ? "name" : step.key);
  return label.empty() ? std::to_string(index) : std::string(label);
}

bool selects(const k8s::JsonValue& item, const PathStep& step, std::size_t index) {
  switch (step.select) {
    case PathStep::Select::kEach:
      return true;
    case PathStep::Select::kWhere:
      return k8s::string_member(item, step.key) == step.value;
    case PathStep::Select::kIndex:
      return index == step.index;
    case PathStep::Select::kNone:
      break;
  }
  return false;
}

void step_into_list(const k8s::JsonValue& list, std::size_t depth, const Trail& trail, Walk& w) {
  const PathStep& step = w.pod.path.steps[depth];
  const auto items = list.items();
  for (std::size_t i = 0; i < items.size() && !w.overflow; ++i) {
    if (!selects(items[i], step, i)) continue;
    const std::string label =
        step.select == PathStep::Select::kWhere ? step.value : label_of(items[i], step, i);
    Trail next = trail;
    next.pointer += "/" + std::to_string(i);
    next.field += "[" + std::to_string(i) + "]";
    next.list_parts.push_back(step.member + "[" + label + "]");
    next.key += "/" + label;
    next.list_item = &items[i];
    next.parent = &list;
    walk(items[i], depth + 1, next, w);
  }
}

void step_into_member(const k8s::JsonValue& node, const k8s::JsonMember& member, bool glob, std::size_t depth,
                      const Trail& trail, Walk& w) {
  const std::vector<PathStep>& steps = w.pod.path.steps;
  const PathStep& step = steps[depth];
  Trail next = trail;
  k8s::append_pointer_token(next.pointer, member.key);
  next.field += (next.field.empty() ? "" : ".") + std::string(member.key);
  next.parent = &node;
  // A glob before the template names the replica type (Master, Worker, Launcher).
  if (glob && (depth + 1 < steps.size() || step.select != PathStep::Select::kNone)) {
    next.glob_key = std::string(member.key);
    next.key += "/" + next.glob_key;
  }
  const bool last = depth + 1 == steps.size();
  if (step.select == PathStep::Select::kNone) {
    if (member.value.is_array() && !last && w.out.none_because.empty()) {
      w.out.none_because = next.field + " is a list: write " + next.field + "[*]";
    }
    walk(member.value, depth + 1, next, w);
  } else if (member.value.is_array()) {
    step_into_list(member.value, depth, next, w);
  } else if (w.out.none_because.empty() && !member.value.is_null()) {
    w.out.none_because = next.field + " is not a list, as " + w.pod.path.text + " expects";
  }
}

void walk(const k8s::JsonValue& node, std::size_t depth, const Trail& trail, Walk& w) {
  if (w.overflow) return;
  if (depth == w.pod.path.steps.size()) {
    record_site(node, trail, w);
    return;
  }
  if (!node.is_object()) return;
  const PathStep& step = w.pod.path.steps[depth];
  const bool glob = step.member.find('*') != std::string::npos;
  if (!glob) {
    const auto members = node.members();
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const k8s::JsonMember& m) { return m.key == step.member; });
    if (it != members.end()) step_into_member(node, *it, false, depth, trail, w);
    return;
  }
  for (const k8s::JsonMember& member : node.members()) {
    if (glob_match(step.member, member.key)) step_into_member(node, member, true, depth, trail, w);
    if (w.overflow) return;
  }
}

}  // namespace

Result<TemplateSites> find_template_sites(const k8s::JsonValue& object, const WorkloadKind& kind) {
  TemplateSites out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < kind.pods.size(); ++i) {
    Walk w{object, kind.pods[i], i, out, std::move(seen)};
    walk(object, 0, Trail{}, w);
    if (w.overflow) {
      return make_error("this object has more than " + std::to_string(kMaxTemplatesPerObject) +
                        " pod templates; gpuadmit judges at most " + std::to_string(kMaxTemplatesPerObject) +
                        " in one object");
    }
    seen = std::move(w.seen);
  }
  if (out.sites.empty() && out.none_because.empty()) {
    std::string paths;
    for (const WorkloadPod& pod : kind.pods) paths += (paths.empty() ? "" : ", ") + pod.path.text;
    out.none_because = "no pod template at " + paths;
  }
  if (!out.sites.empty()) out.none_because.clear();
  return out;
}

const k8s::JsonValue* value_at(const k8s::JsonValue& root, std::string_view pointer) {
  const k8s::JsonValue* node = &root;
  while (!pointer.empty() && node != nullptr) {
    pointer.remove_prefix(1);  // the '/'
    const std::size_t end = std::min(pointer.find('/'), pointer.size());
    std::string token;
    for (std::size_t i = 0; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token += pointer[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    pointer.remove_prefix(end);
    if (node->is_object()) {
      node = node->find(token);
    } else if (node->is_array()) {
      const auto items = node->items();
      std::size_t index = 0;
      for (const char ch : token) index = index * 10 + static_cast<std::size_t>(ch - '0');
      node = !token.empty() && token.size() <= 9 &&
                     token.find_first_not_of("0123456789") == std::string::npos && index < items.size()
                 ? &items[index]
                 : nullptr;
    } else {
      node = nullptr;
    }
  }
  return node;
}

// The old object's templates by their UPDATE key: an item of a keyed list is matched by its label, so a
// reordered list is not a changed one. A key two templates share is left out (they match by pointer).
std::map<std::string, const k8s::JsonValue*> old_templates(const k8s::JsonValue* old_object,
                                                           const WorkloadKind& kind) {
  std::map<std::string, const k8s::JsonValue*> by_key;
  if (old_object == nullptr) return by_key;
  auto old_sites = find_template_sites(*old_object, kind);
  if (!old_sites) return by_key;
  std::set<std::string> shared;
  for (const TemplateSite& site : old_sites->sites) {
    if (!by_key.emplace(site.key, site.pod_template).second) shared.insert(site.key);
  }
  for (const std::string& key : shared) by_key.erase(key);
  return by_key;
}

namespace {

// Whether the member at `ref` (from the root) is the same in both objects.
bool same_at(const k8s::JsonValue& a, const k8s::JsonValue& b, const FieldRef& ref) {
  if (!ref.from_root) return true;  // inside the site, compared with it
  std::string pointer;
  for (const std::string& m : ref.members) k8s::append_pointer_token(pointer, m);
  const k8s::JsonValue* x = value_at(a, pointer);
  const k8s::JsonValue* y = value_at(b, pointer);
  return x == nullptr || y == nullptr ? x == y : k8s::same_json(*x, *y);
}

}  // namespace

// An unchanged template, and for an assembled pod unchanged sources elsewhere in the object too (a
// workflow's own tolerations, which its templates inherit).
bool unchanged(const TemplateSite& site, const std::map<std::string, const k8s::JsonValue*>& before,
               const k8s::JsonValue* old_object, const k8s::JsonValue& object) {
  if (old_object == nullptr) return false;
  const auto it = before.find(site.key);
  const k8s::JsonValue* old_template = it != before.end() ? it->second : value_at(*old_object, site.pointer);
  if (old_template == nullptr || !k8s::same_json(*old_template, *site.pod_template)) return false;
  const WorkloadPod& source = *site.source;
  for (const auto* refs : {&source.fields, &source.metadata, &source.partial_if}) {
    for (const FieldRef& ref : *refs) {
      if (!same_at(*old_object, object, ref)) return false;
    }
  }
  return true;
}

// Whether a template's containers ask for GPUs by resource name or hold DRA claims, read from the template
// as written (a PodSpec-like site is read by its containers' resources alone).
bool asks_for_gpus(const TemplateSite& site, const RuleSet& rules) {
  const k8s::JsonValue* spec = site.source->pod_spec ? site.pod_template : site.pod_template->find("spec");
  if (spec == nullptr || !spec->is_object()) return false;
  if (const k8s::JsonValue* claims = spec->find("resourceClaims");
      claims != nullptr && claims->is_array() && !claims->items().empty())
    return true;
  for (const char* list : {"containers", "initContainers"}) {
    const k8s::JsonValue* containers = spec->find(list);
    if (containers == nullptr || !containers->is_array()) continue;
    for (const k8s::JsonValue& c : containers->items()) {
      const k8s::JsonValue* resources = c.is_object() ? c.find("resources") : nullptr;
      if (resources == nullptr || !resources->is_object()) continue;
      for (const char* side : {"limits", "requests"}) {
        const k8s::JsonValue* values = resources->find(side);
        if (values == nullptr || !values->is_object()) continue;
        for (const auto& member : values->members()) {
          if (rules.is_gpu_resource(member.key)) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace gpuadmit::policy
