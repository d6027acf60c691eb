// Quantities in messages, as people read them.
#pragma once

#include <string>

#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::policy {

// A quantity as people read it: a binary one that is no whole number of its suffix in Gi (or Mi) with two
// decimals, rounded down so that a node's capacity is never overstated (27107535Ki → 25.85Gi).
std::string readable(const k8s::Quantity& q);

}  // namespace gpuadmit::policy
