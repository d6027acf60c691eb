// Quantity::parse on any bytes, and on what it accepts: the canonical text parses back to the same value
// and prints the same again, and the arithmetic the rules use (sums, differences, times, scaled floors,
// rounding to units) stays defined (UBSan) and saturates rather than wraps.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "gpuadmit/k8s/quantity.hpp"

using gpuadmit::k8s::Quantity;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Two quantities from one input, split at the first newline, so the arithmetic meets two parsed values.
  const std::size_t newline = text.find('\n');
  const auto first = Quantity::parse(text.substr(0, newline));
  if (!first) return 0;
  const std::string canonical = first->to_string();
  const auto again = Quantity::parse(canonical);
  gpuadmit::fuzz::require(again.ok(), "the canonical text parses", canonical);
  gpuadmit::fuzz::require(*again == *first, "the canonical text has the same value", canonical);
  // The canonical text of what that reads back is a fixed point. The first one need not be, in Kubernetes
  // either: "62.5Ki" prints "64000" (binary, not a whole number of Ki), which reads back as a decimal
  // quantity and prints "64k" (corpus/quantity/binary-to-decimal-canonical).
  const std::string settled = again->to_string();
  const auto settled_again = Quantity::parse(settled);
  gpuadmit::fuzz::require(
      settled_again.ok() && *settled_again == *first && settled_again->to_string() == settled,
      "the canonical text of the canonical text is a fixed point", settled);
  gpuadmit::fuzz::require(first->units_ceil() >= first->milli_ceil() / 1000 || first->is_negative(),
                          "units_ceil is at least milli_ceil / 1000", canonical);

  Quantity second = *first;
  if (newline != std::string_view::npos) {
    auto parsed = Quantity::parse(text.substr(newline + 1));
    second = parsed ? *parsed : Quantity{};
  }
  // The rules multiply by counts and ratios that are never negative (GPUs, replicas, percentages).
  const std::int64_t factor = second.is_negative() ? 0 : second.units_ceil();
  for (const Quantity& q : {*first + second, *first - second, first->times(factor),
                            first->scaled_ceil_units(3, 2), first->scaled_ceil_units(factor, 7)}) {
    const auto printed = Quantity::parse(q.to_string());
    gpuadmit::fuzz::require(printed.ok() && *printed == q, "an arithmetic result prints as itself",
                            q.to_string());
  }
  return 0;
}
