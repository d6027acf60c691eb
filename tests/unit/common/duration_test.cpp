#include <catch2/catch.hpp>

#include "gpuadmit/common/duration.hpp"

TEST_CASE("durations are read as Kubernetes tools write them, and printed back the same way", "[duration]") {
  // text, seconds
  auto [text, seconds] = GENERATE(table<std::string, long long>({{"720h", 720LL * 3600},
                                                                 {"23h59m", 23 * 3600 + 59 * 60},
                                                                 {"90s", 90},
                                                                 {"1h2m3s", 3723},
                                                                 {"87840h", 87840LL * 3600}}));
  CAPTURE(text);
  const auto parsed = gpuadmit::parse_duration(text);
  REQUIRE(parsed.ok());
  CHECK(parsed->count() == seconds);
  CHECK(gpuadmit::parse_duration(gpuadmit::format_duration(*parsed))->count() == seconds);
}

TEST_CASE("a duration gpuadmit cannot read says so and shows the forms it takes", "[duration]") {
  // text, the start of the error
  auto [text, error] = GENERATE(table<std::string, std::string>({
      {"", "\"\" is not a duration"},
      {"720", "\"720\" is not a duration"},
      {"30d", "\"30d\" is not a duration"},
      {"h", "\"h\" is not a duration"},
      {"5m1h", "\"5m1h\" is not a duration"},  // out of order, as Go would take but no one writes
      {"1.5h", "\"1.5h\" is not a duration"},
      {"-1h", "\"-1h\" is not a duration"},
      {"0s", "\"0s\" is zero"},
      {"87841h", "\"87841h\" is longer than ten years"},
      {"99999999999999999999h", "\"99999999999999999999h\" is longer than ten years"},
  }));
  CAPTURE(text);
  const auto parsed = gpuadmit::parse_duration(text);
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::StartsWith(error));
}

TEST_CASE("durations print in whole hours, minutes and seconds", "[duration]") {
  CHECK(gpuadmit::format_duration(std::chrono::hours(720)) == "720h");
  CHECK(gpuadmit::format_duration(std::chrono::seconds(3723)) == "1h2m3s");
  CHECK(gpuadmit::format_duration(std::chrono::seconds(60)) == "1m");
  CHECK(gpuadmit::format_duration(std::chrono::seconds(0)) == "0s");
}
