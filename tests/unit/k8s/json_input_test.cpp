#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/k8s/json_input.hpp"

using gpuadmit::k8s::JsonLimits;
using gpuadmit::k8s::parse_json;

TEST_CASE("JSON deeper than the limit is refused before parsing", "[json]") {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  auto parsed = parse_json(deep, JsonLimits{1 << 20, 64});
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::Contains("deeper than 64"));
}

TEST_CASE("brackets inside strings do not count toward depth", "[json]") {
  auto parsed =
      parse_json(R"({"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"]"})",
                 JsonLimits{1 << 20, 2});
  CHECK(parsed.ok());
}

TEST_CASE("JSON larger than the limit is refused with both sizes", "[json]") {
  auto parsed = parse_json(std::string(2048, ' ') + "{}", JsonLimits{1024, 64});
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::Contains("2050 bytes exceeds the limit of 1024"));
}

TEST_CASE("malformed JSON says where", "[json]") {
  auto parsed = parse_json(R"({"a": tru})");
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::StartsWith("malformed JSON: parse error at line 1, column"));
}
