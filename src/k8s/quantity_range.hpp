// The range Quantity holds, shared by its parser (quantity_parse.cpp) and its arithmetic and formatting
// (quantity.cpp). Private to the k8s layer.
#pragma once

#include <cstdint>
#include <limits>

#include "gpuadmit/k8s/quantity.hpp"

namespace gpuadmit::k8s::quantity_range {

using Int = Int128;

constexpr Int pow10(int exponent) {
  Int value = 1;
  for (int i = 0; i < exponent; ++i) value *= 10;
  return value;
}

constexpr Int kNanosPerUnit = pow10(9);
constexpr Int kMaxNanos = pow10(21) * kNanosPerUnit;  // 10^21 units: far above any real node or quota.
constexpr Int kBinaryCapNanos = Int{std::numeric_limits<std::int64_t>::max()} * kNanosPerUnit;

}  // namespace gpuadmit::k8s::quantity_range
