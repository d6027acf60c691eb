// The DRA indexes of a snapshot, and the device-class matching that the snapshot and the rules share.
// Private to the policy layer.
#pragma once

#include <string>
#include <vector>

#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/device_cel.hpp"

namespace gpuadmit::policy {

// Fills the snapshot's DRA indexes (slices_by_node, shared_slices, dra_extended_resources) and adds the
// KEP-5004 extended resources to the nodes' allocatable. Call before the node groups are built.
void index_dra(ClusterSnapshot& s);

// Fills device_groups and own_attribute_names; `group_of` is each node's node group (after group_nodes).
void group_devices(ClusterSnapshot& s, const std::vector<std::size_t>& group_of);

// Selectors compiled once; one that Kubernetes would not compile becomes `false` (matches nothing). With a
// review, each expression is compiled once per review: its DeviceMatchers share what it compiled.
std::vector<CompiledSelector> compile_all(const std::vector<std::string>& expressions,
                                          ReviewBudget* review = nullptr);

}  // namespace gpuadmit::policy
