#include "gpuadmit/k8s/quantity.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string>
#include <string_view>

#include "quantity_range.hpp"

namespace gpuadmit::k8s {
namespace {

using namespace quantity_range;  // NOLINT(google-build-using-namespace): the range is this file's vocabulary

void append_int(std::string& out, Int value) {
  if (value == 0) {
    out += '0';
    return;
  }
  if (value <= std::numeric_limits<std::uint64_t>::max()) {
    // Every quantity a pod spec holds: 64-bit division, not the library's 128-bit one.
    std::array<char, 20> digits{};
    const auto [end, ec] =
        std::to_chars(digits.data(), digits.data() + digits.size(), static_cast<std::uint64_t>(value));
    out.append(digits.data(), end);
    return;
  }
  std::array<char, 48> buffer{};
  std::size_t n = 0;
  while (value > 0) {
    buffer.at(n++) = static_cast<char>('0' + static_cast<int>(value % 10));
    value /= 10;
  }
  while (n > 0) out += buffer.at(--n);
}

}  // namespace

Quantity Quantity::from_units(std::int64_t units, Format format) {
  return {Int{units} * kNanosPerUnit, format};
}

Quantity Quantity::from_milli(std::int64_t milli, Format format) {
  return {Int{milli} * pow10(6), format};
}

bool Quantity::is_whole() const noexcept {
  return nanos_ % kNanosPerUnit == 0;
}

std::int64_t Quantity::units_ceil() const noexcept {
  Int units = nanos_ / kNanosPerUnit;
  if (nanos_ % kNanosPerUnit != 0 && nanos_ > 0) ++units;
  return static_cast<std::int64_t>(std::clamp<Int>(units, std::numeric_limits<std::int64_t>::min(),
                                                   std::numeric_limits<std::int64_t>::max()));
}

std::int64_t Quantity::milli_ceil() const noexcept {
  const Int per_milli = pow10(6);
  Int milli = nanos_ / per_milli;
  if (nanos_ % per_milli != 0 && nanos_ > 0) ++milli;
  return static_cast<std::int64_t>(std::clamp<Int>(milli, std::numeric_limits<std::int64_t>::min(),
                                                   std::numeric_limits<std::int64_t>::max()));
}

double Quantity::approx() const noexcept {
  return static_cast<double>(nanos_) / 1e9;
}

Quantity Quantity::saturated(Int nanos, Format format) noexcept {
  const Int bound = format == Format::kBinarySI ? kBinaryCapNanos : kMaxNanos;
  return {std::clamp(nanos, -bound, bound), format};
}

// Operands are within 10^30 nanos (about 2^100), so sums fit an __int128; products are checked.
Quantity& Quantity::operator+=(const Quantity& other) noexcept {
  *this = saturated(nanos_ + other.nanos_, format_);
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& other) noexcept {
  *this = saturated(nanos_ - other.nanos_, format_);
  return *this;
}

Quantity Quantity::times(std::int64_t factor) const noexcept {
  Int product = 0;
  if (__builtin_mul_overflow(nanos_, Int{factor}, &product)) {
    product = (nanos_ < 0) == (factor < 0) ? kMaxNanos : -kMaxNanos;
  }
  return saturated(product, format_);
}

Quantity Quantity::scaled_ceil_units(std::int64_t numerator, std::int64_t denominator) const noexcept {
  if (denominator <= 0) return *this;
  Int product = 0;
  if (__builtin_mul_overflow(nanos_, Int{numerator}, &product)) {
    return saturated((nanos_ < 0) == (numerator < 0) ? kMaxNanos : -kMaxNanos, format_);
  }
  const Int unit_denominator = Int{denominator} * kNanosPerUnit;
  Int units = product / unit_denominator;
  if (product % unit_denominator != 0 && product > 0) ++units;
  return saturated(units * kNanosPerUnit, format_);
}

std::string Quantity::to_string() const {
  if (nanos_ == 0) return "0";
  std::string out;
  if (nanos_ < 0) out += '-';
  const Int magnitude = nanos_ < 0 ? -nanos_ : nanos_;

  if (format_ == Format::kBinarySI) {
    // One 128-bit division gives both the whole units and the check that there is no fraction.
    Int units = magnitude / kNanosPerUnit;
    if (units * kNanosPerUnit == magnitude && units >= 1024) {
      static constexpr std::array<std::string_view, 7> kBinarySuffixes{"",   "Ki", "Mi", "Gi",
                                                                       "Ti", "Pi", "Ei"};
      std::size_t index = 0;
      // Powers of 1024 are shifts: units % 1024 is the low ten bits.
      while (index + 1 < kBinarySuffixes.size() && (units & 1023) == 0) {
        units >>= 10;
        ++index;
      }
      append_int(out, units);
      out += kBinarySuffixes.at(index);
      return out;
    }
  }

  // Decimal forms (and small or fractional binary values, as Kubernetes does): the largest power of 1000
  // that divides the value exactly.
  int exponent = -9;
  Int mantissa = magnitude;
  const auto strip_thousands = [&](auto& m) {
    while ((exponent < 18 || format_ == Format::kDecimalExponent) && m % 1000 == 0) {
      m /= 1000;
      exponent += 3;
    }
  };
  if (magnitude <= std::numeric_limits<std::uint64_t>::max()) {
    auto narrow = static_cast<std::uint64_t>(magnitude);  // 64-bit division when the value allows it
    strip_thousands(narrow);
    mantissa = narrow;
  } else {
    strip_thousands(mantissa);
  }
  append_int(out, mantissa);
  if (format_ == Format::kDecimalExponent) {
    if (exponent != 0) out += "e" + std::to_string(exponent);
    return out;
  }
  static constexpr std::array<std::string_view, 10> kDecimalSuffixes{"n", "u", "m", "",  "k",
                                                                     "M", "G", "T", "P", "E"};
  out += kDecimalSuffixes.at(static_cast<std::size_t>((exponent + 9) / 3));
  return out;
}

}  // namespace gpuadmit::k8s
