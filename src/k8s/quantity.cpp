#include "gpuadmit/k8s/quantity.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <string_view>

#include "gpuadmit/common/text.hpp"

namespace gpuadmit::k8s {
namespace {

using Int = Int128;

constexpr Int pow10(int exponent) {
  Int value = 1;
  for (int i = 0; i < exponent; ++i) value *= 10;
  return value;
}

constexpr Int kNanosPerUnit = pow10(9);
constexpr Int kMaxNanos = pow10(21) * kNanosPerUnit;  // 10^21 units: far above any real node or quota.
constexpr Int kBinaryCapNanos = Int{std::numeric_limits<std::int64_t>::max()} * kNanosPerUnit;
constexpr int kMaxExactDigits = 36;  // fits an __int128 with room for one more multiplication by 10.

struct Suffix {
  int base10 = 0;  // power of ten
  int base2 = 0;   // power of two
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

Result<Suffix> parse_suffix(std::string_view s, std::string_view whole) {
  using F = Quantity::Format;
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal{{{"n", -9},
                                                                              {"u", -6},
                                                                              {"m", -3},
                                                                              {"", 0},
                                                                              {"k", 3},
                                                                              {"M", 6},
                                                                              {"G", 9},
                                                                              {"T", 12},
                                                                              {"P", 15},
                                                                              {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [name, exp] : kDecimal) {
    if (s == name) return Suffix{exp, 0, F::kDecimalSI};
  }
  for (const auto& [name, exp] : kBinary) {
    if (s == name) return Suffix{0, exp, F::kBinarySI};
  }
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    std::string_view digits = s.substr(1);
    bool negative = false;
    if (digits[0] == '+' || digits[0] == '-') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (!digits.empty() && digits.size() <= 4 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      int exp = 0;
      for (char c : digits) exp = exp * 10 + (c - '0');
      return Suffix{negative ? -exp : exp, 0, F::kDecimalExponent};
    }
  }
  return make_error("invalid quantity \"" + std::string(whole) + "\": unknown suffix \"" + std::string(s) +
                    "\" (expected one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<exponent>)");
}

// Divides by 10^k rounding away from zero (Kubernetes rounds sub-nano values up in magnitude).
Int divide_pow10_away(Int value, int k, bool sticky) {
  if (k > 38) return (value != 0 || sticky) ? 1 : 0;
  const Int divisor = pow10(k);
  Int quotient = value / divisor;
  if (value % divisor != 0 || sticky) quotient += 1;
  return quotient;
}

// A quantity's number: its sign, its digits without leading zeros, how many of them follow the point, and
// where the suffix begins.
struct Mantissa {
  bool negative = false;
  std::string digits;
  int fraction_digits = 0;
  bool seen_digit = false;
  std::size_t end = 0;
};

// An optional sign, then digits with at most one '.'; seen_digit is false when there was no digit.
Mantissa read_mantissa(std::string_view text) {
  Mantissa out;
  std::size_t pos = 0;
  if (text[pos] == '+' || text[pos] == '-') {
    out.negative = text[pos] == '-';
    ++pos;
  }
  bool seen_dot = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c >= '0' && c <= '9') {
      out.seen_digit = true;
      if (!out.digits.empty() || c != '0') out.digits += c;
      if (seen_dot) ++out.fraction_digits;
    } else if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else {
      break;
    }
  }
  out.end = pos;
  return out;
}

Error too_large(std::string_view text) {
  return make_error("invalid quantity \"" + std::string(text) + "\": larger than the supported 10^21");
}

// digits * 10^scale * 2^base2 in nanos, rounded away from zero; an error naming `text` past 10^21 units.
Result<Int> nanos_of(std::string digits, int scale, int base2, std::string_view text) {
  // Trailing zeros only move the decimal point; dropping them keeps more room for exact arithmetic.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  if (digits.empty()) return Int{0};
  // Magnitude guard before any arithmetic: number of integer digits of the result in units.
  const double magnitude = static_cast<double>(digits.size()) + scale - 9 + base2 * 0.30103;
  if (magnitude > 22.0) return too_large(text);
  bool sticky = false;  // a non-zero digit was dropped: the true value is slightly larger in magnitude.
  const int exact_digits = base2 > 0 ? 18 : kMaxExactDigits;
  if (static_cast<int>(digits.size()) > exact_digits) {
    const auto dropped = digits.size() - static_cast<std::size_t>(exact_digits);
    sticky = digits.find_first_not_of('0', static_cast<std::size_t>(exact_digits)) != std::string::npos;
    digits.resize(static_cast<std::size_t>(exact_digits));
    scale += static_cast<int>(dropped);
  }
  Int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  value <<= base2;  // at most 18 digits (< 2^60) times 2^60: fits.
  if (scale >= 0) {
    for (int i = 0; i < scale; ++i) {
      if (value > kMaxNanos) break;
      value *= 10;
    }
  } else {
    value = divide_pow10_away(value, -scale, sticky);
  }
  if (value > kMaxNanos) return too_large(text);
  return value;
}

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

// The forms nearly every manifest uses ("8", "500m", "32Gi"): up to nine digits and no suffix or one up to
// G or Gi. Their value (below 2^30 * 10^18 nanos) is exact and in range, so none of the general path's
// steps (trimming, signs, fractions, exponents, rounding, range checks) can change it. Anything else is
// left to that path.
std::optional<Quantity> Quantity::parse_plain(std::string_view text) noexcept {
  std::size_t pos = 0;
  std::uint64_t mantissa = 0;
  for (; pos < text.size() && pos < 9 && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(text[pos] - '0');
  }
  if (pos == 0 || (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')) return std::nullopt;
  const std::string_view suffix = text.substr(pos);
  int base10 = 0;
  int base2 = 0;
  Format format = Format::kDecimalSI;
  if (suffix.size() == 1) {
    constexpr std::string_view kThousands = "num-kMG";  // 10^-9 to 10^9 in steps of 1000; '-' is no suffix
    const std::size_t at = kThousands.find(suffix[0]);
    if (at == std::string_view::npos || suffix[0] == '-') return std::nullopt;
    base10 = 3 * static_cast<int>(at) - 9;
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    constexpr std::string_view kPowersOf1024 = "KMG";
    const std::size_t at = kPowersOf1024.find(suffix[0]);
    if (at == std::string_view::npos) return std::nullopt;
    base2 = 10 * (static_cast<int>(at) + 1);
    format = Format::kBinarySI;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  static constexpr std::array<Int, 19> kPowers = [] {
    std::array<Int, 19> powers{};
    for (int i = 0; i < 19; ++i) powers[static_cast<std::size_t>(i)] = pow10(i);
    return powers;
  }();
  const int nano_exponent = base10 + 9;  // 0 to 18
  return Quantity((Int{mantissa} << base2) * kPowers[static_cast<std::size_t>(nano_exponent)], format);
}

Result<Quantity> Quantity::parse(std::string_view text) {
  if (auto plain = parse_plain(text)) return *plain;
  const std::string_view original = text;
  text = trim_space(text);
  if (text.empty()) return make_error("invalid quantity \"" + std::string(original) + "\": empty");
  if (text.size() > kMaxLength) {
    return make_error("invalid quantity \"" + std::string(text.substr(0, 24)) + "…\": longer than " +
                      std::to_string(kMaxLength) + " characters");
  }
  Mantissa mantissa = read_mantissa(text);
  if (!mantissa.seen_digit) {
    return make_error("invalid quantity \"" + std::string(text) +
                      "\": expected a number such as 500m, 2 or 16Gi");
  }
  auto suffix = parse_suffix(text.substr(mantissa.end), text);
  if (!suffix) return suffix.error();
  // value = digits * 10^(base10 - fraction_digits) * 2^base2 units; in nanos, shift the power of ten by 9.
  auto nanos = nanos_of(std::move(mantissa.digits), suffix->base10 - mantissa.fraction_digits + 9,
                        suffix->base2, text);
  if (!nanos) return nanos.error();
  Int value = *nanos;
  if (suffix->format == Format::kBinarySI) value = std::min(value, kBinaryCapNanos);
  return Quantity(mantissa.negative ? -value : value, suffix->format);
}

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
