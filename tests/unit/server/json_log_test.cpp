// Log lines are JSON whatever a user puts in a pod name: hand-written escaping must round-trip.
#include <catch2/catch.hpp>

#include <sstream>

#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {
namespace {

struct Captured {
  std::ostringstream stream;
  JsonLog log;
  Captured() : log(make()) {}
  JsonLog make() {
    auto logger =
        std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_st>(stream));
    logger->set_pattern("%v");
    logger->set_level(spdlog::level::debug);
    return JsonLog(logger);
  }
};

TEST_CASE("strings are escaped so every line parses back to the same text") {
  auto [description, input, expected] = GENERATE(table<std::string, std::string, std::string>({
      {"plain", "gpu-pod-7f9c", "gpu-pod-7f9c"},
      {"quotes and backslashes", R"(a"b\c)", R"(a"b\c)"},
      {"newline, tab and other controls", "a\nb\tc\x01\x1f", "a\nb\tc\x01\x1f"},
      {"valid multi-byte UTF-8", "naïve-模型-🚀", "naïve-模型-🚀"},
      {"a lone continuation byte", "a\x80z", "a\xEF\xBF\xBDz"},
      {"a truncated sequence at the end", "ab\xE6\xA8", "ab\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"an overlong encoding of '/'", "\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"a UTF-16 surrogate", "\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
  }));
  INFO(description);
  Captured captured;
  captured.log.write(LogLine(spdlog::level::info, "review").add("name", input).add("names", {input, "x"}));
  const std::string text = captured.stream.str();
  REQUIRE(text.back() == '\n');
  CHECK(text.find('\n') == text.size() - 1);  // one line, whatever the input
  const auto line = nlohmann::json::parse(text);
  CHECK(line["name"] == expected);
  CHECK(line["names"][0] == expected);
  CHECK(line["msg"] == "review");
  CHECK(line["level"] == "info");
}

TEST_CASE("keys are escaped like values when they need it, and written as they are when not") {
  const std::string key = GENERATE(as<std::string>{}, "uid", "rules_fired", "", R"(a"b)", R"(a\b)", "a\nb",
                                   "na\xC3\xAFve", "bad\x80");
  CAPTURE(key);
  Captured captured;
  captured.log.write(LogLine(spdlog::level::info, "review").add(key, "v").add("after", std::int64_t{1}));
  const auto line = nlohmann::json::parse(captured.stream.str());
  const std::string expected = key == "bad\x80" ? "bad\xEF\xBF\xBD" : key;
  CHECK(line[expected] == "v");
  CHECK(line["after"] == 1);
}

TEST_CASE("a line has the timestamp, level and message first, then the fields in order") {
  Captured captured;
  captured.log.warn("tls handshake failed", {{"peer", "127.0.0.1:5555"}, {"suppressed", 3}});
  const std::string text = captured.stream.str();
  CHECK_THAT(text,
             Catch::Matches(R"(\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z","level":"warning",)"
                            R"("msg":"tls handshake failed","peer":"127.0.0.1:5555","suppressed":3\}\n)"));
}

TEST_CASE("lines below the level are not written") {
  Captured captured;
  captured.log.debug("shown");
  captured.log.write(LogLine(spdlog::level::trace, "hidden"));
  CHECK(captured.stream.str().find("hidden") == std::string::npos);
  CHECK(captured.stream.str().find("shown") != std::string::npos);
}

}  // namespace
}  // namespace gpuadmit::server
