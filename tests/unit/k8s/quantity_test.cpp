#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gpuadmit/k8s/quantity.hpp"

using gpuadmit::k8s::Quantity;

namespace {

Quantity q(const char* text) {
  auto parsed = Quantity::parse(text);
  if (!parsed) FAIL("parse failed for " << text << ": " << parsed.error().message);
  return *parsed;
}

// The strings of a tests/fixtures/fuzz/quantity/*.hex file, one hex-encoded string per line.
std::vector<std::string> reproducers(const std::string& name) {
  std::ifstream in(std::string(GPUADMIT_FIXTURES_DIR) + "/fuzz/quantity/" + name);
  if (!in) FAIL("cannot open fuzz/quantity/" << name);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    std::string text;
    for (std::size_t i = 0; i + 1 < line.size(); i += 2) {
      text += static_cast<char>(std::stoi(line.substr(i, 2), nullptr, 16));
    }
    out.push_back(text);
  }
  return out;
}

}  // namespace

TEST_CASE("every quantity form Kubernetes accepts parses to its canonical string", "[quantity]") {
  // Canonical forms from apimachinery's quantity_test.go and the serialization rules in admission-protocol
  // §5.4.
  auto [input, canonical] = GENERATE(table<const char*, const char*>({
      {"0", "0"},
      {"500m", "500m"},
      {"0.5", "500m"},
      {"1.5", "1500m"},
      {"1.08", "1080m"},
      {"2", "2"},
      {"2k", "2k"},
      {"3000", "3k"},
      {"1000M", "1G"},
      {"16Gi", "16Gi"},
      {"1024Mi", "1Gi"},
      {"1.5Gi", "1536Mi"},
      {"300Mi", "300Mi"},
      {".001Ki", "1024m"},
      {"1e3", "1e3"},
      {"1000e-12", "1e-9"},
      {"0.001T", "1G"},
      {"12E", "12E"},
      {"5", "5"},
      {"1Ki", "1Ki"},
      {"1024", "1024"},
      {"100n", "100n"},
      {"1u", "1u"},
      {"+3", "3"},
      {"-2Gi", "-2Gi"},
      {"12e6", "12e6"},
      {"5e-1", "500e-3"},
      {"0.9n", "1n"},
      {" 2 ", "2"},
      {"7.", "7"},
      {"8Ei", "9223372036854775807"},
  }));
  CAPTURE(input);
  CHECK(q(input).to_string() == canonical);
}

// "8", "500m", "32Gi" take a shortcut; the same value with ".0" (or a "+") takes the general path.
TEST_CASE("the common short forms parse to what the general path gives", "[quantity]") {
  const std::string suffix = GENERATE(as<std::string>{}, "", "n", "u", "m", "k", "M", "G", "Ki", "Mi", "Gi");
  for (const char* mantissa : {"0", "1", "7", "8", "10", "500", "1000", "1024", "000000009", "100000000",
                               "123456789", "999999999", "1000000000", "9999999999"}) {
    const std::string plain = std::string(mantissa) + suffix;
    CAPTURE(plain);
    const Quantity fast = q(plain.c_str());
    for (const std::string& general : {std::string(mantissa) + ".0" + suffix, "+" + plain}) {
      const Quantity slow = q(general.c_str());
      CHECK(fast == slow);
      CHECK(fast.format() == slow.format());
      CHECK(fast.to_string() == slow.to_string());
    }
  }
}

TEST_CASE("forms the shortcut does not take still parse or fail as before", "[quantity]") {
  const auto [input, canonical] = GENERATE(table<const char*, const char*>({
      {"5Ti", "5Ti"},
      {"2T", "2T"},
      {"3P", "3P"},
      {"1Ei", "1Ei"},
      {"12E", "12E"},
      {"0001k", "1k"},
      {"1000000000Gi", "1000000000Gi"},
      {"1e3", "1e3"},
  }));
  CAPTURE(input);
  CHECK(q(input).to_string() == canonical);
  for (const char* bad :
       {"1Xi", "1g", "1mi", "1 k", "1K", "1ki", "1GiB", "1m1", "1-", "1e", "1e+", "1e1.5"}) {
    CAPTURE(bad);
    CHECK_FALSE(Quantity::parse(bad));
  }
}

TEST_CASE("equal values written differently compare equal", "[quantity]") {
  auto [a, b] = GENERATE(table<const char*, const char*>({
      {"0.5", "500m"},
      {"1Ki", "1024"},
      {"1e3", "1k"},
      {"1Gi", "1073741824"},
      {"1", "1000m"},
      {"0", "0Gi"},
      {"1.5Gi", "1536Mi"},
      {"3", "3000m"},
  }));
  CAPTURE(a, b);
  CHECK(q(a) == q(b));
}

TEST_CASE("ordering is exact at every scale", "[quantity]") {
  CHECK(q("999m") < q("1"));
  CHECK(q("1G") < q("1Gi"));
  CHECK(q("1n") > q("0"));
  CHECK(q("-1") < q("0"));
  CHECK(q("1E") > q("999P"));
  CHECK(q("1000000000000000001") > q("1E"));
}

TEST_CASE("arithmetic has no floating-point error", "[quantity]") {
  Quantity sum;
  for (int i = 0; i < 10; ++i) sum += q("100m");
  CHECK(sum == q("1"));
  CHECK((q("1.1") + q("2.2")).to_string() == "3300m");
  CHECK(q("16Gi").times(3) == q("48Gi"));
  CHECK((q("8Gi") - q("4Gi")).to_string() == "4Gi");
  CHECK(q("10").scaled_ceil_units(1, 3) == q("4"));
}

TEST_CASE("whole-unit checks follow the API server's integer rule", "[quantity]") {
  auto [text, whole] = GENERATE(table<const char*, bool>({
      {"3", true},
      {"3000m", true},
      {"3Ki", true},
      {"0.5", false},
      {"1500m", false},
      {"0", true},
      {"1n", false},
  }));
  CAPTURE(text);
  CHECK(q(text).is_whole() == whole);
}

TEST_CASE("malformed quantities are errors that name the string", "[quantity]") {
  auto [text, fragment] = GENERATE(table<const char*, const char*>({
      {"", "empty"},
      {"abc", "\"abc\""},
      {"1.2.3", "\"1.2.3\""},
      {"5K", "unknown suffix \"K\""},
      {"1gi", "unknown suffix \"gi\""},
      {"--1", "\"--1\""},
      {"1e", "unknown suffix \"e\""},
      {"1e99999", "larger than the supported"},
      {"1e99999999999999999999", "unknown suffix"},
      {"1e30", "larger than the supported"},
      {"99999999999999999999999999", "larger than the supported"},
      {"1234567890123456789012345678901234567890123456789012345678901234567890", "longer than 64"},
  }));
  CAPTURE(text);
  auto parsed = Quantity::parse(text);
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::Contains(fragment));
}

TEST_CASE("huge but supported values keep their exact value", "[quantity]") {
  CHECK(q("1e21").to_string() == "1e21");
  CHECK(q("1000E").to_string() == "1000E");
  CHECK(q("123456789012345678901234m").to_string() == "123456789012345678901234m");
  CHECK(q("0.000000000000000000001").to_string() == "1n");  // rounds away from zero at nano resolution
}

TEST_CASE("value accessors round up like Value() and MilliValue()", "[quantity]") {
  CHECK(q("1500m").units_ceil() == 2);
  CHECK(q("2").units_ceil() == 2);
  CHECK(q("1.0001").milli_ceil() == 1001);
  CHECK(q("16Gi").units_ceil() == 17179869184LL);
}

TEST_CASE("arithmetic saturates at the range parse accepts instead of overflowing", "[quantity]") {
  // Fuzz finding R-2: guaranteed-qos multiplied the per-GPU memory by a GPU count near 2^63 and the
  // __int128 product wrapped negative (UB). Decimal values stop at 10^21 units, binary ones at 2^63-1 units
  // (Kubernetes' cap), so every result still prints as a quantity that parses back to itself.
  const std::int64_t huge = std::numeric_limits<std::int64_t>::max();
  auto [left, factor, expected] = GENERATE_COPY(table<const char*, std::int64_t, const char*>({
      {"32Gi", huge, "9223372036854775807"},
      {"1000", huge, "1000E"},
      {"1000E", 2, "1000E"},
      {"-1000", huge, "-1000E"},
      {"8", huge, "73786976294838206456"},  // within range: exact
      {"16Gi", 3, "48Gi"},
  }));
  CAPTURE(left, factor);
  const Quantity product = q(left).times(factor);
  CHECK(product.to_string() == expected);
  CHECK(q(product.to_string().c_str()) == product);
}

TEST_CASE("sums saturate at the supported magnitude", "[quantity]") {
  Quantity sum = q("1000E");
  sum += q("1000E");
  CHECK(sum == q("1000E"));
  Quantity difference = q("-1000E");
  difference -= q("1000E");
  CHECK(difference == q("-1000E"));
  CHECK(q("1000E").scaled_ceil_units(std::numeric_limits<std::int64_t>::max(), 1) == q("1000E"));
}

// Fuzz finding Q-1 (reproducers: tests/fixtures/fuzz/quantity/value-binary-19-digits-truncated.txt and
// order-binary-equal-but-not.txt): with a binary suffix, digits past the 18th were cut before the multiply by
// 2^k, so values came out too small by up to 11 units, fractions turned whole and distinct values compared
// equal. Expected nanos from k8s.io/apimachinery's AsDec() (the same figures exact decimal arithmetic gives).
TEST_CASE("binary-suffixed values with many digits are held exactly, as Kubernetes holds them",
          "[quantity]") {
  const auto [input, nanos, units] = GENERATE(table<const char*, const char*, std::int64_t>({
      {"1000000000.000000001Ki", "1024000000000000001024n", 1024000000001},
      {"100000000.0000000001Ki", "102400000000000000103n", 102400000001},
      {"26404.77771926814553Ki", "27038492384530582n", 27038493},
      {"9007199254740991.008Ki", "9223372036854774792192000000n", 9223372036854774793},
      {"6.29771835970001289985144Ei", "7260774926855503203599756677n", 7260774926855503204},
      {"-100000000.0000000001Ki", "-102400000000000000103n", -102400000000},
  }));
  CAPTURE(input);
  const Quantity value = q(input);
  CHECK(value == q(nanos));
  CHECK_FALSE(value.is_whole());
  CHECK(value.units_ceil() == units);
}

TEST_CASE("binary-suffixed values that differ past the 18th digit are ordered", "[quantity]") {
  CHECK(q("1.6940481424424860612Gi") > q("1.69404814244248606000000001Gi"));
  CHECK(q("1.000000000000000000001Ki") > q("1Ki"));
  CHECK(q("1.000000000000000000001Ki").to_string() == "1024000000001n");
}

// Fuzz finding Q-2 (tests/fixtures/fuzz/quantity/reject-*.txt): strings Kubernetes accepts that the parser
// rejected. The API server re-encodes every quantity it decodes, so only `gpuadmit check` on files met them.
TEST_CASE("strings Kubernetes accepts parse to the value Kubernetes gives them", "[quantity]") {
  const auto [input, canonical] = GENERATE(table<const char*, const char*>({
      // no digit in the mantissa: Kubernetes reads it as 0
      {"-", "0"},
      {"+", "0"},
      {".", "0"},
      {"-.", "0"},
      {"Ki", "0"},
      {"m", "0"},
      {"e3", "0"},
      {"E00012", "0"},
      // exponents of any length (strconv.ParseInt)
      {"1e00003", "1e3"},
      {"1E00018", "1e18"},
      {"1e-10000", "1e-9"},  // rounds away from zero at nano resolution
      {"0e99999", "0"},
      // Unicode whitespace, which Quantity.UnmarshalJSON's strings.TrimSpace removes
      {"1\u00a0", "1"},
      {"\u00851", "1"},
      {"2\u2003", "2"},
      {"\u30003", "3"},
      // binary values are capped at 2^63-1 units, however large
      {"869Ei", "9223372036854775807"},
      {"9223372036854775807Ki", "9223372036854775807"},
      {"999999999999Gi", "9223372036854775807"},
      {"-9999999999999999999Ki", "-9223372036854775807"},
  }));
  CAPTURE(input);
  CHECK(q(input).to_string() == canonical);
}

// Every string the fuzz run saved (tests/fixtures/fuzz/quantity), with the verdict it settled on.
TEST_CASE("the saved quantity reproducers parse as Kubernetes parses them, bar the stated limits",
          "[quantity][fuzz]") {
  for (const char* name : {"value-binary-19-digits-truncated.hex", "order-binary-equal-but-not.hex",
                           "reject-exponent-5-digits.hex", "reject-no-digit-k8s-zero.hex",
                           "reject-over-1e21-binary-k8s-caps.hex", "reject-unicode-whitespace.hex",
                           "value-negative-rounding.hex", "k8s-canonical-1000E-bug.hex"}) {
    for (const std::string& text : reproducers(name)) {
      CAPTURE(name, text);
      CHECK(Quantity::parse(text).ok());
    }
  }
  const std::vector<std::string> order = reproducers("order-binary-equal-but-not.hex");
  REQUIRE(order.size() == 2);
  CHECK(q(order[0].c_str()) != q(order[1].c_str()));
  // Kubernetes prints 10^21 units and more as "1" (no suffix exists for them); gpuadmit prints 1000E.
  CHECK(q("1000000000000000000000").to_string() == "1000E");
  // Stated limits: more than 64 characters; a decimal magnitude above 10^21 units, which also covers
  // Kubernetes truncating an exponent to 32 bits (1e4294967296 is 1 there) and taking minutes on
  // 1e2147483647.
  for (const char* name :
       {"reject-over-64-chars.hex", "k8s-exponent-int32-truncation.hex", "k8s-parsequantity-hangs.hex"}) {
    for (const std::string& text : reproducers(name)) {
      CAPTURE(name, text);
      CHECK_FALSE(Quantity::parse(text).ok());
    }
  }
}
