// Quantity: Kubernetes' resource.Quantity, held exactly.
//
// Values are kept as a signed count of nano-units (the resolution Kubernetes keeps), so `0.5` and `500m`,
// or `1Ki` and `1024`, compare equal without floating point. Parsing follows apimachinery's grammar
// (`<sign><digits>[.<digits>]<suffix>`, suffixes n u m "" k M G T P E, Ki..Ei, and e<int>/E<int>);
// formatting follows its canonical form (largest exact suffix in the family the user wrote).
//
// Accepts what k8s.io/apimachinery's ParseQuantity accepts after Quantity.UnmarshalJSON's
// strings.TrimSpace (Unicode whitespace included), with the same value and ordering: a mantissa with no
// digit ("-", ".", "Ki") is 0, an exponent is any int64, binary-suffixed values are exact at any number of
// digits and capped at 2^63-1 units, and finer than 1n rounds away from zero. tests/differential/quantity
// checks this against apimachinery itself. The differences, on purpose (stated, tested):
// - a quantity string is at most 64 characters;
// - a decimal magnitude above 10^21 units is an error, where Kubernetes keeps an unbounded inf.Dec (and
//   truncates an exponent to 32 bits: 1e4294967296 is 1 there);
// - the canonical text of 10^21 units and more is written with E ("1000E"); Kubernetes writes "1";
// - JSON escapes are decoded before parsing ("1\u0030" is 10), where UnmarshalJSON reads the raw bytes
//   and rejects them. The API server re-encodes every quantity before a webhook sees it, so only
//   `gpuadmit check` on files can meet one.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::k8s {

// GCC/Clang extension, wide enough for 10^21 units in nano-units; __extension__ keeps -Wpedantic quiet.
__extension__ using Int128 = __int128;

class Quantity {
 public:
  enum class Format : std::uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  static constexpr std::size_t kMaxLength = 64;

  constexpr Quantity() = default;

  static Result<Quantity> parse(std::string_view text);
  static Quantity from_units(std::int64_t units, Format format = Format::kDecimalSI);
  static Quantity from_milli(std::int64_t milli, Format format = Format::kDecimalSI);

  // Canonical string, exactly as the API server would serialize this value.
  [[nodiscard]] std::string to_string() const;

  [[nodiscard]] bool is_zero() const noexcept { return nanos_ == 0; }
  [[nodiscard]] bool is_negative() const noexcept { return nanos_ < 0; }
  // True when the value is a whole number of units (what extended resources such as GPUs require).
  [[nodiscard]] bool is_whole() const noexcept;
  // Value in units rounded up (toward +infinity), clamped to int64. Quantity.Value() rounds a negative value
  // away from zero and wraps past int64; the policy calls this on positive values only.
  [[nodiscard]] std::int64_t units_ceil() const noexcept;
  // Value in milli-units, rounded and clamped as units_ceil (Quantity.MilliValue()).
  [[nodiscard]] std::int64_t milli_ceil() const noexcept;
  // The exact value in nano-units (what the differential test compares with apimachinery's).
  [[nodiscard]] Int128 nanos() const noexcept { return nanos_; }
  // Approximate value for display and ratios only; never compare with it.
  [[nodiscard]] double approx() const noexcept;
  [[nodiscard]] Format format() const noexcept { return format_; }

  // Exact arithmetic; the result keeps the left operand's format. A result beyond what parse accepts for
  // that format (10^21 units, or 2^63-1 units for binary suffixes) saturates at that bound, so it still
  // prints as a quantity that parses back to itself.
  Quantity& operator+=(const Quantity& other) noexcept;
  Quantity& operator-=(const Quantity& other) noexcept;
  friend Quantity operator+(Quantity a, const Quantity& b) noexcept { return a += b; }
  friend Quantity operator-(Quantity a, const Quantity& b) noexcept { return a -= b; }
  // Multiplies by a whole number.
  [[nodiscard]] Quantity times(std::int64_t factor) const noexcept;
  // Multiplies by numerator/denominator, rounding up to the next whole unit (used for floors and sizes).
  [[nodiscard]] Quantity scaled_ceil_units(std::int64_t numerator, std::int64_t denominator) const noexcept;

  friend bool operator==(const Quantity& a, const Quantity& b) noexcept { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) noexcept {
    return a.nanos_ <=> b.nanos_;
  }

 private:
  constexpr Quantity(Int128 nanos, Format format) : nanos_(nanos), format_(format) {}
  static std::optional<Quantity> parse_plain(std::string_view text) noexcept;
  static Quantity saturated(Int128 nanos, Format format) noexcept;

  Int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace gpuadmit::k8s
