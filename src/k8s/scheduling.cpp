#include "gpuadmit/k8s/scheduling.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace gpuadmit::k8s {
namespace {

bool parse_int(std::string_view text, std::int64_t& out) noexcept {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end;
}

bool contains(const std::vector<std::string>& values, std::string_view value) noexcept {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool match_value(const NodeSelectorRequirement& r, const std::string* value) noexcept {
  const std::string_view op = r.op;
  if (op == "In") return value != nullptr && contains(r.values, *value);
  if (op == "NotIn") return value == nullptr || !contains(r.values, *value);
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  if (op == "Gt" || op == "Lt") {
    std::int64_t label = 0;
    std::int64_t bound = 0;
    if (value == nullptr || r.values.size() != 1 || !parse_int(*value, label) ||
        !parse_int(r.values[0], bound)) {
      return false;
    }
    return op == "Gt" ? label > bound : label < bound;
  }
  return false;  // unknown operators never match (the API server rejects them anyway)
}

}  // namespace

bool tolerates(const Toleration& toleration, const Taint& taint) noexcept {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op == "Exists") return true;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return false;
}

bool tolerated_by_any(std::span<const Toleration> tolerations, const Taint& taint) noexcept {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return tolerates(t, taint); });
}

bool blocks_scheduling(const Taint& taint) noexcept {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

bool matches(const NodeSelectorRequirement& requirement, const StringMap& labels) noexcept {
  const auto it = labels.find(requirement.key);
  return match_value(requirement, it == labels.end() ? nullptr : &it->second);
}

bool matches_field(const NodeSelectorRequirement& requirement, std::string_view node_name) noexcept {
  if (requirement.key != "metadata.name") return false;  // the only field Kubernetes supports
  const std::string name(node_name);
  return match_value(requirement, &name);
}

bool matches(const NodeSelectorTerm& term, const Node& node) noexcept {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  return std::all_of(term.match_expressions.begin(), term.match_expressions.end(),
                     [&](const NodeSelectorRequirement& r) { return matches(r, node.labels); }) &&
         std::all_of(term.match_fields.begin(), term.match_fields.end(),
                     [&](const NodeSelectorRequirement& r) { return matches_field(r, node.name); });
}

bool node_selector_matches(const Pod& pod, const Node& node) noexcept {
  for (const auto& [key, value] : pod.node_selector) {
    const auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  if (!pod.has_required_affinity) return true;
  return std::any_of(pod.required_node_terms.begin(), pod.required_node_terms.end(),
                     [&](const NodeSelectorTerm& t) { return matches(t, node); });
}

}  // namespace gpuadmit::k8s
