// Quantity::parse: apimachinery's grammar and rounding, checked against apimachinery itself by
// tests/differential/quantity.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "gpuadmit/k8s/quantity.hpp"
#include "quantity_range.hpp"

namespace gpuadmit::k8s {
namespace {

using namespace quantity_range;  // NOLINT(google-build-using-namespace): the range is this file's vocabulary
__extension__ using UInt128 = unsigned __int128;

constexpr int kMaxExactDigits = 36;  // fits an __int128 with room for one more multiplication by 10.

struct Suffix {
  int base10 = 0;  // power of ten
  int base2 = 0;   // power of two
  Quantity::Format format = Quantity::Format::kDecimalSI;
  std::int32_t exponent32 = 0;  // an exponent as Kubernetes keeps it, truncated to 32 bits
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
    // An exponent is any int64 strconv.ParseInt reads (a sign, then digits). Past +-1000 the value is
    // above the supported range or rounds to 1n, so the exponent is held clamped there.
    std::string_view digits = s.substr(1);
    const bool negative = digits[0] == '-';
    if (digits[0] == '+' || digits[0] == '-') digits.remove_prefix(1);
    std::int64_t exp = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), exp);
    if (!digits.empty() && digits[0] >= '0' && digits[0] <= '9' && ec == std::errc{} &&
        end == digits.data() + digits.size()) {
      const int clamped = static_cast<int>(std::min<std::int64_t>(exp, 1000));
      return Suffix{negative ? -clamped : clamped, 0, F::kDecimalExponent,
                    static_cast<std::int32_t>(negative ? -exp : exp)};
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

// Kubernetes reads a mantissa with no digit ("-", ".", "Ki") as zero where its int64 fast path takes the
// suffix: a power of ten from -9 up (the exponent truncated to 32 bits, as it keeps it), or Ki to Ti. The
// others go to its inf.Dec path, which rejects a number with no digit.
bool digitless_accepted(const Suffix& suffix) {
  if (suffix.format == Quantity::Format::kBinarySI) return suffix.base2 <= 40;
  const std::int32_t exponent =
      suffix.format == Quantity::Format::kDecimalExponent ? suffix.exponent32 : suffix.base10;
  return exponent >= -9;
}

// Leading or trailing whitespace as Go's unicode.IsSpace knows it (what Quantity.UnmarshalJSON's
// strings.TrimSpace removes): ASCII's, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F
// and U+3000, in UTF-8. The length of the one at the front (or back) of `text`, 0 if none.
std::size_t space_at_front(std::string_view t) {
  if (t.empty()) return 0;
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(t[i]); };
  if (std::isspace(b(0)) != 0) return 1;
  if (t.size() >= 2 && b(0) == 0xC2 && (b(1) == 0x85 || b(1) == 0xA0)) return 2;
  if (t.size() < 3) return 0;
  const std::uint32_t c = (std::uint32_t{b(0)} << 16) | (std::uint32_t{b(1)} << 8) | b(2);
  const bool space = c == 0xE19A80 || (c >= 0xE28080 && c <= 0xE2808A) || c == 0xE280A8 || c == 0xE280A9 ||
                     c == 0xE280AF || c == 0xE2819F || c == 0xE38080;
  return space ? 3 : 0;
}
std::size_t space_at_back(std::string_view t) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    if (t.size() >= n && space_at_front(t.substr(t.size() - n)) == n) return n;
  }
  return 0;
}
std::string_view trim_unicode_space(std::string_view text) {
  while (const std::size_t n = space_at_front(text)) text.remove_prefix(n);
  while (const std::size_t n = space_at_back(text)) text.remove_suffix(n);
  return text;
}

// An unsigned number of up to 384 bits, for the exact binary-suffix path only.
class Wide {
 public:
  void multiply_add(std::uint32_t factor, std::uint32_t addend) {
    std::uint64_t carry = addend;
    for (std::uint32_t& limb : limbs_) {
      const std::uint64_t next = std::uint64_t{limb} * factor + carry;
      limb = static_cast<std::uint32_t>(next);
      carry = next >> 32;
    }
  }
  // Divides in place; returns the remainder.
  std::uint32_t divide(std::uint32_t divisor) {
    std::uint64_t remainder = 0;
    for (auto it = limbs_.rbegin(); it != limbs_.rend(); ++it) {
      const std::uint64_t current = (remainder << 32) | *it;
      *it = static_cast<std::uint32_t>(current / divisor);
      remainder = current % divisor;
    }
    return static_cast<std::uint32_t>(remainder);
  }
  // The value, or kMaxNanos + 1 when it is larger than kMaxNanos.
  [[nodiscard]] Int to_int() const {
    for (std::size_t i = 4; i < limbs_.size(); ++i) {
      if (limbs_.at(i) != 0) return kMaxNanos + 1;
    }
    UInt128 value = 0;
    for (std::size_t i = 4; i-- > 0;) value = (value << 32) | limbs_.at(i);
    return value > static_cast<UInt128>(kMaxNanos) ? kMaxNanos + 1 : static_cast<Int>(value);
  }

 private:
  std::array<std::uint32_t, 12> limbs_{};  // least significant first
};

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

// digits * 10^scale * 2^base2 in nanos, rounded away from zero, for a binary suffix: done on a few hundred
// bits, since digits times 2^base2 need not fit an __int128 (the string is at most 64 characters: at most
// 64 digits times 2^60, under 2^280). The caller has checked the magnitude (below 10^23 units).
Int binary_nanos_exact(std::string_view digits, int scale, int base2) {
  Wide value;
  for (const char c : digits) value.multiply_add(10, static_cast<std::uint32_t>(c - '0'));
  for (int left = base2; left > 0; left -= 16) value.multiply_add(std::uint32_t{1} << std::min(left, 16), 0);
  bool sticky = false;
  for (int i = 0; i < scale; ++i) value.multiply_add(10, 0);
  for (int i = 0; i < -scale; ++i) sticky = value.divide(10) != 0 || sticky;
  return value.to_int() + (sticky ? 1 : 0);
}

// digits * 10^scale * 2^base2 in nanos, rounded away from zero. Past 10^21 units: an error naming `text`,
// or for a binary suffix Kubernetes' cap of 2^63-1 units (however far past it the value is).
Result<Int> nanos_of(std::string digits, int scale, int base2, std::string_view text) {
  // Trailing zeros only move the decimal point; dropping them keeps more room for exact arithmetic.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  if (digits.empty()) return Int{0};
  // Magnitude guard before any arithmetic: number of integer digits of the result in units.
  const double magnitude = static_cast<double>(digits.size()) + scale - 9 + base2 * 0.30103;
  if (base2 > 0) {
    return magnitude > 22.0 ? kBinaryCapNanos
                            : std::min(binary_nanos_exact(digits, scale, base2), kBinaryCapNanos);
  }
  if (magnitude > 22.0) return too_large(text);
  // A decimal value past 36 digits is above 10^21 units unless the dropped digits are all fraction, which
  // the sticky bit rounds exactly.
  bool sticky = false;  // a non-zero digit was dropped: the true value is slightly larger in magnitude.
  if (static_cast<int>(digits.size()) > kMaxExactDigits) {
    const auto dropped = digits.size() - static_cast<std::size_t>(kMaxExactDigits);
    sticky = digits.find_first_not_of('0', static_cast<std::size_t>(kMaxExactDigits)) != std::string::npos;
    digits.resize(static_cast<std::size_t>(kMaxExactDigits));
    scale += static_cast<int>(dropped);
  }
  Int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
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
  text = trim_unicode_space(text);
  if (text.empty()) return make_error("invalid quantity \"" + std::string(original) + "\": empty");
  if (text.size() > kMaxLength) {
    return make_error("invalid quantity \"" + std::string(text.substr(0, 24)) + "…\": longer than " +
                      std::to_string(kMaxLength) + " characters");
  }
  Mantissa mantissa = read_mantissa(text);
  auto suffix = parse_suffix(text.substr(mantissa.end), text);
  if (!mantissa.seen_digit && (!suffix || !digitless_accepted(*suffix))) {
    return make_error("invalid quantity \"" + std::string(text) +
                      "\": expected a number such as 500m, 2 or 16Gi");
  }
  if (!suffix) return suffix.error();
  // value = digits * 10^(base10 - fraction_digits) * 2^base2 units; in nanos, shift the power of ten by 9.
  auto nanos = nanos_of(std::move(mantissa.digits), suffix->base10 - mantissa.fraction_digits + 9,
                        suffix->base2, text);
  if (!nanos) return nanos.error();
  Int value = *nanos;
  if (suffix->format == Format::kBinarySI) value = std::min(value, kBinaryCapNanos);
  return Quantity(mantissa.negative ? -value : value, suffix->format);
}

}  // namespace gpuadmit::k8s
