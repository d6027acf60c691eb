#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "gpuadmit/k8s/quantity.hpp"

using gpuadmit::k8s::Quantity;

namespace {

Quantity q(const char* text) {
  auto parsed = Quantity::parse(text);
  if (!parsed) FAIL("parse failed for " << text << ": " << parsed.error().message);
  return *parsed;
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
       {"1Xi", "1g", "1mi", "1 k", "1K", "1ki", "Gi", "1GiB", "1m1", "1-", "999999999999Gi"}) {
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
      {"Gi", "\"Gi\""},
      {"--1", "\"--1\""},
      {"1e", "unknown suffix \"e\""},
      {"1e99999", "unknown suffix"},
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
