// Whether a pod's DRA claims can be allocated on some node it can use, as the scheduler's DRA plugin would
// try: every request of every claim on one node, from devices its class and selectors match, that tolerate
// the request's device tolerations, meeting the claims' matchAttribute constraints; firstAvailable takes the
// first way that fits. Devices other claims hold are not subtracted (what is free changes by the second;
// counting them free can only allow), and a selector gpuadmit does not evaluate counts as a match: a "no"
// here is a no from the devices that exist. Private to the policy layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dra_devices.hpp"

namespace gpuadmit::policy {

// What one request's first way (its `exactly`, or firstAvailable's first choice that exists) found on the
// nodes the pod can use, for the message when nothing fits.
struct RequestSurvey {
  std::size_t claim = 0;    // position in the resolved claims
  std::size_t request = 0;  // position in the claim's requests
  std::int64_t need = 1;    // devices on one node (1 for All)
  std::int64_t most_on_a_node = 0;
  std::string most_node;      // a node with that many
  std::int64_t matching = 0;  // devices matching, over the usable nodes
  std::size_t matching_nodes = 0;
  std::int64_t class_devices = 0;  // devices of the class alone (its selectors), over the usable nodes
  bool class_anywhere = true;      // the cluster has a device of the class on some node, usable or not
  std::int64_t tainted = 0;        // matching but kept away by device taints the request does not tolerate
  std::string error;               // a selector's runtime error, with its expression
  std::string error_expression;
  // attribute short name → value → {devices, nodes}: what the class's devices on usable nodes have.
  std::map<std::string, std::map<std::string, std::pair<std::int64_t, std::size_t>>> values;
  std::set<std::string> attribute_names;  // every attribute the class's devices there have
};

struct PodFit {
  bool fits = false;             // some usable node holds all of it
  std::size_t usable_nodes = 0;  // Ready, schedulable, matching the pod's selector/affinity and taints
  std::vector<RequestSurvey> requests;
};

// Only claims with a spec and requests whose classes exist are considered; the caller reports the rest.
// Selectors are evaluated within `budget` (none: each within its own).
PodFit fit_claims(const k8s::Pod& pod, const std::vector<PodClaim>& claims, const ClusterSnapshot& cluster,
                  ReviewBudget* budget);

// Why nothing fits, for people: the first request that fits no usable node, what the devices there have,
// and the fix; `summary` gets the one-line form. Empty when no node is usable at all (node-fit says why).
std::string describe_unfit(const PodFit& fit, const std::vector<PodClaim>& claims, std::string& summary);

}  // namespace gpuadmit::policy
