#include "readable_quantity.hpp"

#include <array>
#include <cmath>
#include <cstdio>

namespace gpuadmit::policy {

std::string readable(const k8s::Quantity& q) {
  std::string text = q.to_string();
  if (q.format() != k8s::Quantity::Format::kBinarySI || !(text.ends_with("Ki") || text.ends_with("Mi"))) {
    return text;
  }
  constexpr double kMi = 1024.0 * 1024.0;
  const double bytes = q.approx();
  const bool gi = bytes >= 1024.0 * kMi;
  const double units = std::floor(bytes / (gi ? 1024.0 * kMi : kMi) * 100.0) / 100.0;
  if (units < 1.0) return text;
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.2f", units);
  std::string out = buffer.data();
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out + (gi ? "Gi" : "Mi");
}

}  // namespace gpuadmit::policy
