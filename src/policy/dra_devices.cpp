// DRA devices for the rules (dra_devices.hpp): claims resolved, GPU classes recognised, devices matched.
#include "dra_devices.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <vector>

#include "cluster_dra.hpp"
#include "gpuadmit/k8s/scheduling.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {

std::vector<PodClaim> resolve_claims(const k8s::Pod& pod, const ClusterSnapshot* cluster) {
  std::vector<PodClaim> out;
  for (std::size_t i = 0; i < pod.resource_claims.size(); ++i) {
    const k8s::PodResourceClaim& ref = pod.resource_claims[i];
    PodClaim claim{i, &ref, nullptr, nullptr};
    if (cluster != nullptr && !ref.claim_name.empty()) {
      claim.claim = cluster->resource_claim(pod.meta.namespace_, ref.claim_name);
      if (claim.claim != nullptr) claim.spec = &claim.claim->spec;
    } else if (cluster != nullptr && !ref.template_name.empty()) {
      if (const auto* t = cluster->claim_template(pod.meta.namespace_, ref.template_name))
        claim.spec = &t->spec;
    }
    out.push_back(claim);
  }
  return out;
}

bool has_unknown_claims(const k8s::Pod& pod, const ClusterSnapshot* cluster) {
  if (pod.resource_claims.empty()) return false;
  if (cluster == nullptr || !cluster->dra_listed) return true;
  for (const PodClaim& claim : resolve_claims(pod, cluster)) {
    if (claim.spec == nullptr) return true;
    for (const k8s::DeviceRequest& request : claim.spec->requests) {
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        if (cluster->device_class(sub.device_class) == nullptr) return true;
      }
    }
  }
  return false;
}

bool is_gpu_device_class(std::string_view name, const ClusterSnapshot* cluster, const RuleSet& rules) {
  const auto& patterns = rules.dra_claims.gpu_device_classes;
  if (std::any_of(patterns.begin(), patterns.end(),
                  [&](const std::string& p) { return glob_match(p, name); }))
    return true;
  const k8s::DeviceClass* cls = cluster != nullptr ? cluster->device_class(name) : nullptr;
  return cls != nullptr && !cls->extended_resource_name.empty() &&
         rules.is_gpu_resource(cls->extended_resource_name);
}

namespace {

// The most devices matching `request` on any one node (for allocationMode: All).
std::int64_t most_on_a_node(const ClusterSnapshot& cluster, const k8s::DeviceSubRequest& request,
                            ReviewBudget* budget) {
  const k8s::DeviceClass* cls = cluster.device_class(request.device_class);
  if (cls == nullptr) return 1;
  DeviceMatcher matcher(*cls, request, budget);
  std::int64_t most = 0;
  for (const ClusterSnapshot::NodeGroup& unit :
       device_units(cluster, matcher.may_read(cluster.own_attribute_names))) {
    std::int64_t count = 0;
    for (const k8s::ResourceSlice* slice : cluster.slices_for(cluster.nodes[unit.first])) {
      for (const k8s::Device& device : slice->devices) {
        if (matcher.match(device) != DeviceMatcher::Match::kNo) ++count;
      }
    }
    most = std::max(most, count);
  }
  return std::max<std::int64_t>(most, 1);
}

std::int64_t request_gpus(const k8s::DeviceRequest& request, const ClusterSnapshot* cluster,
                          const RuleSet& rules, ReviewBudget* budget) {
  if (request.alternatives.empty()) return 0;
  const k8s::DeviceSubRequest& first = request.alternatives.front();
  if (!is_gpu_device_class(first.device_class, cluster, rules)) return 0;
  if (!first.all) return std::max<std::int64_t>(first.count, 0);
  return cluster != nullptr ? most_on_a_node(*cluster, first, budget) : 1;
}

}  // namespace

std::int64_t dra_gpu_units(const k8s::Container& c, const k8s::Pod& pod, const ClusterSnapshot* cluster,
                           const RuleSet& rules, ReviewBudget* budget) {
  if (c.resources.claims.empty() || cluster == nullptr) return 0;
  std::int64_t total = 0;
  const std::vector<PodClaim> claims = resolve_claims(pod, cluster);
  for (const k8s::ContainerClaim& uses : c.resources.claims) {
    const auto claim = std::find_if(claims.begin(), claims.end(),
                                    [&](const PodClaim& p) { return p.ref->name == uses.name; });
    if (claim == claims.end() || claim->spec == nullptr) continue;
    for (const k8s::DeviceRequest& request : claim->spec->requests) {
      if (!uses.request.empty() && uses.request != request.name) continue;
      total += std::min<std::int64_t>(request_gpus(request, cluster, rules, budget), 1 << 20);
    }
  }
  return total;
}

std::vector<ClusterSnapshot::NodeGroup> device_units(const ClusterSnapshot& cluster, bool each_node) {
  std::vector<ClusterSnapshot::NodeGroup> out;
  for (const std::vector<std::size_t>& group : cluster.device_groups) {
    if (each_node) {
      for (const std::size_t i : group) out.push_back({i, 1});
    } else {
      out.push_back({group.front(), group.size()});
    }
  }
  return out;
}

bool tells_group_apart(const k8s::Pod& pod, const ClusterSnapshot& cluster,
                       const std::vector<const DeviceMatcher*>& matchers) {
  return !pod.node_name.empty() || names_nodes(pod) ||
         std::any_of(matchers.begin(), matchers.end(),
                     [&](const DeviceMatcher* m) { return m->may_read(cluster.own_attribute_names); });
}

std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>> nodes_with_gpu_devices(
    const k8s::Pod& pod, const ClusterSnapshot& cluster, const RuleSet& rules, ReviewBudget* budget) {
  std::vector<DeviceMatcher> matchers;
  for (const PodClaim& claim : resolve_claims(pod, &cluster)) {
    if (claim.spec == nullptr) continue;
    for (const k8s::DeviceRequest& request : claim.spec->requests) {
      for (const k8s::DeviceSubRequest& way : request.alternatives) {
        const k8s::DeviceClass* cls = cluster.device_class(way.device_class);
        if (cls != nullptr && is_gpu_device_class(cls->name, &cluster, rules))
          matchers.emplace_back(*cls, way, budget);
      }
    }
  }
  std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>> out;
  if (matchers.empty()) return out;
  std::vector<const DeviceMatcher*> seen;
  for (const DeviceMatcher& m : matchers) seen.push_back(&m);
  for (const ClusterSnapshot::NodeGroup& unit :
       device_units(cluster, tells_group_apart(pod, cluster, seen))) {
    std::int64_t count = 0;
    for (const k8s::ResourceSlice* slice : cluster.slices_for(cluster.nodes[unit.first])) {
      for (const k8s::Device& d : slice->devices) {
        const bool could = std::any_of(matchers.begin(), matchers.end(), [&](DeviceMatcher& m) {
          const DeviceMatcher::Match r = m.match(d);
          return r == DeviceMatcher::Match::kYes || r == DeviceMatcher::Match::kUnknown;
        });
        if (could) ++count;
      }
    }
    if (count > 0) out.emplace_back(unit, count);
  }
  return out;
}

DeviceMatcher::DeviceMatcher(const k8s::DeviceClass& cls, const k8s::DeviceSubRequest& request,
                             ReviewBudget* budget)
    : budget_(budget) {
  std::vector<std::string> expressions = cls.selectors;
  expressions.insert(expressions.end(), request.selectors.begin(), request.selectors.end());
  selectors_ = compile_all(expressions, budget);
  index_words();
}

DeviceMatcher::DeviceMatcher(const k8s::DeviceClass& cls, ReviewBudget* budget)
    : selectors_(compile_all(cls.selectors, budget)), budget_(budget) {
  index_words();
}

void DeviceMatcher::index_words() {
  for (const CompiledSelector& selector : selectors_) pins_.push_back(attribute_pin(selector));
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (const CompiledSelector& selector : selectors_) {
    const std::string& text = selector.expression();
    Words& w = words_.emplace_back();
    w.escaped = text.find('\\') != std::string::npos;
    for (std::size_t i = 0; i < text.size();) {
      if (!word_char(text[i])) {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < text.size() && word_char(text[j])) ++j;
      w.words.emplace(text, i, j - i);
      i = j;
    }
  }
}

DeviceMatcher::Kind DeviceMatcher::outcome(std::size_t i, const k8s::DeviceView& view) {
  SelectorOutcome result = evaluate(selectors_[i], view, budget_);
  if (result.kind == Kind::kError && error_.empty()) {
    error_ = std::move(result.message);
    error_expression_ = selectors_[i].expression();
  } else if (result.kind == Kind::kNotEvaluated && not_evaluated_.empty()) {
    not_evaluated_ = std::move(result.message);
  }
  return result.kind;
}

DeviceMatcher::Match DeviceMatcher::evaluate_all(const k8s::DeviceView& view) {
  return fold([&](std::size_t i) { return outcome(i, view); });
}

bool DeviceMatcher::may_read(const std::set<std::string, std::less<>>& names) const {
  return !names.empty() && std::any_of(words_.begin(), words_.end(), [&](const Words& w) {
    return w.escaped ||
           std::any_of(names.begin(), names.end(), [&](const std::string& n) { return w.words.contains(n); });
  });
}

// A selector that may read an attribute the device keeps to itself sees the whole device. The test is
// conservative: a name spelt anywhere (in a string literal too) counts, and so does any escape.
bool DeviceMatcher::reads_own(std::size_t i, const k8s::Device& device) const {
  const Words& w = words_[i];
  return w.escaped ||
         std::any_of(device.own_attributes.begin(), device.own_attributes.end(), [&](const auto& a) {
           const std::string_view name = a.first;
           return w.words.contains(std::string(name.substr(name.rfind('/') + 1)));
         });
}

bool DeviceMatcher::pinned_elsewhere(std::size_t i, const k8s::Device& device) const {
  return pins_[i] && pin_excludes(*pins_[i], device);
}

DeviceMatcher::Match DeviceMatcher::match(const k8s::Device& device) {
  // A spent review evaluates nothing more: every device could match, at no cost per device.
  if (budget_ != nullptr && !budget_->exhausted().empty()) {
    if (not_evaluated_.empty()) not_evaluated_ = budget_->exhausted();
    return Match::kUnknown;
  }
  std::vector<bool> own(selectors_.size(), false);
  bool any_own = false;
  for (std::size_t i = 0; i < selectors_.size() && !device.own_attributes.empty(); ++i) {
    own[i] = reads_own(i, device);
    any_own = any_own || own[i];
  }
  if (!any_own) {
    auto [it, inserted] = by_view_.try_emplace(device.view.get(), Match::kNo);
    if (inserted) it->second = evaluate_all(*device.view);
    return it->second;
  }
  // Only the selectors that read an own attribute are evaluated device by device; the others keep their
  // outcome per shared view.
  std::optional<k8s::DeviceView> full;
  return fold([&](std::size_t i) {
    if (own[i]) {
      if (pinned_elsewhere(i, device)) return Kind::kFalse;
      if (!full) full = device.full_view();
      return outcome(i, *full);
    }
    auto [it, inserted] = by_selector_.try_emplace({device.view.get(), i}, Kind::kTrue);
    if (inserted) it->second = outcome(i, *device.view);
    return it->second;
  });
}

bool tolerates_device(const k8s::DeviceSubRequest& request, const k8s::Device& device) {
  return std::all_of(device.taints.begin(), device.taints.end(), [&](const k8s::Taint& taint) {
    return !k8s::blocks_scheduling(taint) || k8s::tolerated_by_any(request.tolerations, taint);
  });
}

std::string attribute_text(const k8s::AttributeValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::get<k8s::VersionText>(value).text;
}

}  // namespace gpuadmit::policy
