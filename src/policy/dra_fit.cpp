// A pod's DRA claims against the devices of the nodes it can use (dra_fit.hpp).
#include "dra_fit.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

struct RequestWay {
  const k8s::DeviceSubRequest* sub = nullptr;
  DeviceMatcher matcher;
};

struct ClaimRequest {
  std::size_t claim = 0;
  const k8s::DeviceRequest* request = nullptr;
  std::vector<RequestWay> ways;
  std::optional<DeviceMatcher> class_only;  // the first way's class, for what the devices have
  std::vector<std::string> shown;           // attribute short names to list values of
};

bool usable(const k8s::Pod& pod, const k8s::Node& node) {
  if (!pod.node_name.empty()) return pod.node_name == node.name;
  if (node.unschedulable || !node.ready || !k8s::node_selector_matches(pod, node)) return false;
  return std::all_of(node.taints.begin(), node.taints.end(), [&](const k8s::Taint& t) {
    return !k8s::blocks_scheduling(t) || k8s::tolerated_by_any(pod.tolerations, t);
  });
}

// Usable nodes, devices or not; the node groups' nodes share all that usable() reads unless the pod names
// nodes.
std::size_t usable_nodes(const k8s::Pod& pod, const ClusterSnapshot& cluster, bool each_node) {
  std::size_t n = 0;
  if (each_node) {
    for (const k8s::Node& node : cluster.nodes) n += usable(pod, node) ? 1 : 0;
  } else {
    for (const ClusterSnapshot::NodeGroup& g : cluster.node_groups)
      n += usable(pod, cluster.nodes[g.first]) ? g.count : 0;
  }
  return n;
}

// "gpu.nvidia.com/parentUUID" on a device of driver gpu.nvidia.com is its "parentUUID".
const k8s::AttributeValue* qualified_attribute(const k8s::Device& device, const std::string& name) {
  if (const auto* value = device.attribute(name)) return value;
  const std::size_t slash = name.find('/');
  if (slash == std::string::npos || name.substr(0, slash) != device.view->driver) return nullptr;
  return device.attribute(name.substr(slash + 1));
}

std::vector<std::string> shown_attributes(const k8s::DeviceSubRequest& sub) {
  std::vector<std::string> out{"productName"};
  for (const std::string& expression : sub.selectors) {
    // Names read as device.attributes["domain"].name or the short form: any identifier after a '.' or
    // inside ["..."] that is not a known function is a candidate; the survey keeps those devices have.
    std::size_t i = 0;
    while (i < expression.size()) {
      if (expression[i] == '.' || expression[i] == '"' || expression[i] == '\'') {
        std::size_t j = i + 1;
        while (j < expression.size() &&
               (std::isalnum(static_cast<unsigned char>(expression[j])) != 0 || expression[j] == '_'))
          ++j;
        if (j > i + 1) {
          std::string name = expression.substr(i + 1, j - i - 1);
          if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
        }
        i = j;
      } else {
        ++i;
      }
    }
  }
  return out;
}

std::vector<ClaimRequest> requests_of(const std::vector<PodClaim>& claims, const ClusterSnapshot& cluster,
                                      ReviewBudget* budget) {
  std::vector<ClaimRequest> out;
  for (std::size_t c = 0; c < claims.size(); ++c) {
    if (claims[c].spec == nullptr) continue;
    for (const k8s::DeviceRequest& request : claims[c].spec->requests) {
      ClaimRequest r{c, &request, {}, std::nullopt, {}};
      for (const k8s::DeviceSubRequest& sub : request.alternatives) {
        const k8s::DeviceClass* cls = cluster.device_class(sub.device_class);
        if (cls == nullptr) continue;
        if (!r.class_only) {
          r.class_only.emplace(*cls, budget);
          r.shown = shown_attributes(sub);
        }
        r.ways.push_back({&sub, DeviceMatcher(*cls, sub, budget)});
      }
      if (!r.ways.empty()) out.push_back(std::move(r));
    }
  }
  return out;
}

// Whether the claim's matchAttribute constraints can hold with the candidates each request has here.
bool constraints_hold(const k8s::DeviceClaim& spec, const std::vector<ClaimRequest>& requests,
                      std::size_t claim, const std::vector<std::vector<const k8s::Device*>>& candidates,
                      const std::vector<std::int64_t>& needs) {
  for (const k8s::DeviceConstraint& constraint : spec.constraints) {
    if (constraint.match_attribute.empty()) continue;
    std::map<std::string, std::size_t> satisfied;  // value → requests it can serve
    std::size_t constrained = 0;
    for (std::size_t r = 0; r < requests.size(); ++r) {
      if (requests[r].claim != claim) continue;
      const auto& names = constraint.requests;
      if (!names.empty() && std::find(names.begin(), names.end(), requests[r].request->name) == names.end())
        continue;
      ++constrained;
      std::map<std::string, std::int64_t> by_value;
      for (const k8s::Device* device : candidates[r]) {
        if (const auto* value = qualified_attribute(*device, constraint.match_attribute))
          ++by_value[std::to_string(value->index()) + attribute_text(*value)];
      }
      for (const auto& [value, count] : by_value) {
        if (count >= needs[r]) ++satisfied[value];
      }
    }
    if (constrained == 0) continue;
    if (std::none_of(satisfied.begin(), satisfied.end(),
                     [&](const auto& s) { return s.second == constrained; }))
      return false;
  }
  return true;
}

// `weight`: how many nodes this one stands for (its device group's, when the group is visited once).
void survey(ClaimRequest& r, RequestSurvey& s, const std::vector<const k8s::ResourceSlice*>& slices,
            std::int64_t weight) {
  std::map<std::string, std::map<std::string, std::int64_t>> here;
  for (const k8s::ResourceSlice* slice : slices) {
    for (const k8s::Device& device : slice->devices) {
      if (r.class_only->match(device) == DeviceMatcher::Match::kNo) continue;
      s.class_devices += weight;
      for (const auto& [name, value] : device.view->attributes) s.attribute_names.insert(name);
      for (const auto& [name, value] : device.own_attributes) s.attribute_names.insert(name);
      for (const std::string& name : r.shown) {
        if (const auto* value = device.attribute(name)) ++here[name][attribute_text(*value)];
      }
    }
  }
  for (const auto& [name, values] : here) {
    for (const auto& [value, count] : values) {
      auto& [devices, nodes] = s.values[name][value];
      devices += count * weight;
      nodes += static_cast<std::size_t>(weight);
    }
  }
}

void record_first_way(RequestSurvey& s, const RequestWay& way, const k8s::Node& node, std::int64_t n,
                      std::int64_t weight) {
  if (s.error.empty() && !way.matcher.error().empty()) {
    s.error = way.matcher.error();
    s.error_expression = way.matcher.error_expression();
  }
  s.matching += n * weight;
  if (n > 0) s.matching_nodes += static_cast<std::size_t>(weight);
  if (n > s.most_on_a_node) {
    s.most_on_a_node = n;
    s.most_node = node.name;
  }
}

// Where a request is tried: a node's devices, and how many nodes it stands for.
struct Place {
  const k8s::Node& node;
  std::vector<const k8s::ResourceSlice*> slices;
  std::int64_t weight = 1;
};

// Whether every request has devices at `place`; with `fit`, its surveys are updated too. `chosen` and
// `needs` get what each request would take there.
bool requests_fit(std::vector<ClaimRequest>& requests, PodFit* fit, const Place& place,
                  std::vector<std::vector<const k8s::Device*>>& chosen, std::vector<std::int64_t>& needs) {
  bool all_fit = true;
  const auto& slices = place.slices;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    RequestSurvey* s = fit != nullptr ? &fit->requests[r] : nullptr;
    if (s != nullptr) survey(requests[r], *s, slices, place.weight);
    bool fits = false;
    for (std::size_t w = 0; w < requests[r].ways.size(); ++w) {
      RequestWay& way = requests[r].ways[w];
      std::vector<const k8s::Device*> candidates;
      for (const k8s::ResourceSlice* slice : slices) {
        for (const k8s::Device& device : slice->devices) {
          const DeviceMatcher::Match m = way.matcher.match(device);
          if (m == DeviceMatcher::Match::kNo || m == DeviceMatcher::Match::kError) continue;
          if (tolerates_device(*way.sub, device)) {
            candidates.push_back(&device);
          } else if (w == 0 && s != nullptr) {
            s->tainted += place.weight;
          }
        }
      }
      if (w == 0 && s != nullptr)
        record_first_way(*s, way, place.node, static_cast<std::int64_t>(candidates.size()), place.weight);
      const std::int64_t need = way.sub->all ? 1 : way.sub->count;
      if (!fits && static_cast<std::int64_t>(candidates.size()) >= need) {
        fits = true;
        needs[r] = way.sub->all ? static_cast<std::int64_t>(candidates.size()) : need;
        chosen[r] = std::move(candidates);
        if (s == nullptr) break;  // later ways matter only to the survey
      }
    }
    all_fit = all_fit && fits;
    if (!all_fit && s == nullptr) break;  // this node is out
  }
  return all_fit;
}

// Whether what each request would take is enough distinct devices, meeting the claims' constraints.
bool holds_together(const std::vector<PodClaim>& claims, const std::vector<ClaimRequest>& requests,
                    const std::vector<std::vector<const k8s::Device*>>& chosen,
                    const std::vector<std::int64_t>& needs) {
  std::set<const k8s::Device*> distinct;
  std::int64_t total = 0;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    distinct.insert(chosen[r].begin(), chosen[r].end());
    total += needs[r];
  }
  if (static_cast<std::int64_t>(distinct.size()) < total) return false;
  for (std::size_t c = 0; c < claims.size(); ++c) {
    if (claims[c].spec != nullptr && !constraints_hold(*claims[c].spec, requests, c, chosen, needs))
      return false;
  }
  return true;
}

// Whether any node of the cluster, usable by the pod or not, reaches a device of the request's class.
bool class_in_cluster(ClaimRequest& r, const ClusterSnapshot& cluster) {
  const auto of_class = [&](const std::vector<const k8s::ResourceSlice*>& slices) {
    return std::any_of(slices.begin(), slices.end(), [&](const k8s::ResourceSlice* slice) {
      return std::any_of(slice->devices.begin(), slice->devices.end(), [&](const k8s::Device& device) {
        return r.class_only->match(device) != DeviceMatcher::Match::kNo;
      });
    });
  };
  return of_class(cluster.shared_slices) ||
         std::any_of(cluster.slices_by_node.begin(), cluster.slices_by_node.end(),
                     [&](const auto& node) { return of_class(node.second); });
}

}  // namespace

PodFit fit_claims(const k8s::Pod& pod, const std::vector<PodClaim>& claims, const ClusterSnapshot& cluster,
                  ReviewBudget* budget) {
  PodFit fit;
  std::vector<ClaimRequest> requests = requests_of(claims, cluster, budget);
  for (const ClaimRequest& r : requests) {
    RequestSurvey s;
    s.claim = r.claim;
    s.request = static_cast<std::size_t>(r.request - claims[r.claim].spec->requests.data());
    s.need = r.ways.front().sub->all ? 1 : r.ways.front().sub->count;
    fit.requests.push_back(std::move(s));
  }
  if (requests.empty()) {
    fit.fits = true;
    return fit;
  }
  // One node of each device group stands for the group, unless the pod or a selector tells its nodes apart.
  std::vector<const DeviceMatcher*> matchers;
  for (const ClaimRequest& r : requests) {
    for (const RequestWay& way : r.ways) matchers.push_back(&way.matcher);
  }
  const bool each_node = tells_group_apart(pod, cluster, matchers);
  // First the scheduler's try, stopping at the first node that fits; only when none does, a second pass
  // surveys what the usable nodes have, for the message.
  const std::vector<ClusterSnapshot::NodeGroup> units = device_units(cluster, each_node);
  for (const bool surveying : {false, true}) {
    for (const ClusterSnapshot::NodeGroup& unit : units) {
      const k8s::Node& node = cluster.nodes[unit.first];
      if (!usable(pod, node)) continue;
      const Place place{node, cluster.slices_for(node), static_cast<std::int64_t>(unit.count)};
      std::vector<std::vector<const k8s::Device*>> chosen(requests.size());
      std::vector<std::int64_t> needs(requests.size(), 0);
      if (requests_fit(requests, surveying ? &fit : nullptr, place, chosen, needs) &&
          holds_together(claims, requests, chosen, needs)) {
        fit.fits = true;
        return fit;
      }
    }
  }
  fit.usable_nodes = usable_nodes(pod, cluster, each_node);
  for (std::size_t r = 0; r < requests.size(); ++r) {
    RequestSurvey& s = fit.requests[r];
    s.class_anywhere = s.class_devices > 0 || class_in_cluster(requests[r], cluster);
  }
  return fit;
}

}  // namespace gpuadmit::policy
