// One way to combine hashes for the snapshot's groupings (node groups, device groups). Private to the
// policy layer.
#pragma once

#include <cstddef>

namespace gpuadmit::policy {

inline void hash_mix(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6U) + (seed >> 2U);
}

}  // namespace gpuadmit::policy
