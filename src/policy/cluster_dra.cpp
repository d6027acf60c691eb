// The DRA part of a snapshot: lookups of classes, claims and templates, the slices each node reaches, and
// KEP-5004's extended resources served by DeviceClasses (extendedResourceName).
#include <algorithm>
#include <unordered_map>

#include "cluster_dra.hpp"
#include "dra_devices.hpp"
#include "gpuadmit/k8s/scheduling.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy {

const k8s::DeviceClass* ClusterSnapshot::device_class(std::string_view name) const {
  const auto it = std::lower_bound(device_classes.begin(), device_classes.end(), name,
                                   [](const k8s::DeviceClass& c, std::string_view n) { return c.name < n; });
  return it != device_classes.end() && it->name == name ? &*it : nullptr;
}

const k8s::ResourceClaim* ClusterSnapshot::resource_claim(std::string_view ns, std::string_view name) const {
  const auto it = claims_by_key.find(std::string(ns) + "/" + std::string(name));
  return it == claims_by_key.end() ? nullptr : it->second;
}

const k8s::ResourceClaimTemplate* ClusterSnapshot::claim_template(std::string_view ns,
                                                                  std::string_view name) const {
  const auto it = templates_by_key.find(std::string(ns) + "/" + std::string(name));
  return it == templates_by_key.end() ? nullptr : it->second;
}

std::vector<const k8s::ResourceSlice*> ClusterSnapshot::slices_for(const k8s::Node& node) const {
  std::vector<const k8s::ResourceSlice*> out;
  if (const auto it = slices_by_node.find(node.name); it != slices_by_node.end()) out = it->second;
  for (const k8s::ResourceSlice* slice : shared_slices) {
    if (slice->all_nodes ||
        std::any_of(slice->node_selector.begin(), slice->node_selector.end(),
                    [&](const k8s::NodeSelectorTerm& t) { return k8s::matches(t, node); }))
      out.push_back(slice);
  }
  return out;
}

std::vector<CompiledSelector> compile_all(const std::vector<std::string>& expressions, ReviewBudget* review) {
  std::vector<CompiledSelector> out;
  for (const std::string& expression : expressions) {
    const std::shared_ptr<const CompiledSelector> kept =
        review != nullptr ? review->compiled(expression) : nullptr;
    if (kept) {
      out.push_back(*kept);
      continue;
    }
    if (review != nullptr) {
      // Compiling is charged to the review as evaluating is: a tenant's template of 32 selectors of 10 KiB
      // of distinct regular expressions would otherwise cost 425 ms before any device is looked at.
      if (review->allowance() <= 0) {
        out.push_back(not_compiled(expression, review->exhausted()));
        continue;
      }
      review->spend(static_cast<std::int64_t>(expression.size()) * kCompileStepsPerByte);
    }
    auto compiled = compile_selector(expression);
    if (compiled) {
      out.push_back(*std::move(compiled));
    } else {
      // Kubernetes would not compile it either; evaluate() of a failed compile is an error outcome.
      CompiledSelector never = *compile_selector("false");
      out.push_back(std::move(never));
    }
    if (review != nullptr)
      review->keep_compiled(expression, std::make_shared<const CompiledSelector>(out.back()));
  }
  return out;
}

namespace {

// Of each (driver, pool), only the slices of its newest generation count: the older ones are on their way
// out (the scheduler ignores them too).
void index_slices(ClusterSnapshot& s) {
  std::unordered_map<std::string, std::int64_t> newest;
  for (const k8s::ResourceSlice& slice : s.resource_slices) {
    auto [it, inserted] = newest.try_emplace(slice.driver + '\n' + slice.pool, slice.generation);
    if (!inserted) it->second = std::max(it->second, slice.generation);
  }
  for (const k8s::ResourceSlice& slice : s.resource_slices) {
    if (slice.generation < newest[slice.driver + '\n' + slice.pool]) continue;
    if (!slice.node_name.empty()) {
      s.slices_by_node[slice.node_name].push_back(&slice);
    } else if (slice.all_nodes || !slice.node_selector.empty()) {
      s.shared_slices.push_back(&slice);
    }
  }
}

// KEP-5004: a node without the resource in its allocatable (no device plugin) gets the number of its
// devices of the class, under the class's extendedResourceName and under the name every class has,
// deviceclass.resource.kubernetes.io/<class>. Selectors outside the evaluated subset count the device: the
// scheduler may well allocate it, and an undercount would deny pods that schedule.
void add_extended_resources(ClusterSnapshot& s) {
  struct Served {
    std::string resource;
    DeviceMatcher matcher;
  };
  std::vector<Served> served;
  for (const k8s::DeviceClass& cls : s.device_classes) {
    if (!cls.extended_resource_name.empty()) {
      s.dra_extended_resources.emplace(cls.extended_resource_name, cls.name);
      served.push_back({cls.extended_resource_name, DeviceMatcher(cls, nullptr)});
    }
    std::string implicit = "deviceclass.resource.kubernetes.io/" + cls.name;
    s.dra_extended_resources.emplace(implicit, cls.name);
    served.push_back({std::move(implicit), DeviceMatcher(cls, nullptr)});
  }
  if (served.empty()) return;
  for (auto& pointer : s.nodes.pointers()) {
    const auto slices = s.slices_for(*pointer);
    if (slices.empty()) continue;
    std::shared_ptr<k8s::Node> node;  // copied once, at the first resource it gains
    for (Served& each : served) {
      if (pointer->allocatable.contains(each.resource)) continue;
      std::int64_t count = 0;
      for (const k8s::ResourceSlice* slice : slices) {
        for (const k8s::Device& device : slice->devices) {
          const DeviceMatcher::Match m = each.matcher.match(device);
          if (m == DeviceMatcher::Match::kYes || m == DeviceMatcher::Match::kUnknown) ++count;
        }
      }
      if (count == 0) continue;
      if (!node) node = std::make_shared<k8s::Node>(*pointer);
      node->allocatable[each.resource] = k8s::Quantity::from_units(count);
    }
    if (node) pointer = std::move(node);
  }
}

}  // namespace

void index_dra(ClusterSnapshot& s) {
  auto& classes = s.device_classes.pointers();
  const auto by_name = [](const auto& a, const auto& b) { return a->name < b->name; };
  if (!std::is_sorted(classes.begin(), classes.end(), by_name))
    std::sort(classes.begin(), classes.end(), by_name);
  for (const k8s::ResourceClaim& claim : s.resource_claims)
    s.claims_by_key.emplace(claim.meta.namespace_ + "/" + claim.meta.name, &claim);
  for (const k8s::ResourceClaimTemplate& t : s.claim_templates)
    s.templates_by_key.emplace(t.meta.namespace_ + "/" + t.meta.name, &t);
  index_slices(s);
  add_extended_resources(s);
}

}  // namespace gpuadmit::policy
