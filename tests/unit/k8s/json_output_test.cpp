#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "gpuadmit/config/yaml_documents.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "gpuadmit/k8s/json_output.hpp"

using gpuadmit::k8s::append_json;
using gpuadmit::k8s::json_text;
using nlohmann::json;

TEST_CASE("json_text prints what nlohmann's dump prints", "[json]") {
  const json value = GENERATE(
      json(nullptr), json(true), json(false), json(0), json(-1),
      json(std::numeric_limits<std::int64_t>::min()), json(std::numeric_limits<std::uint64_t>::max()),
      json(1.0), json(-0.0), json(1.5e300), json(0.1), json(std::numeric_limits<double>::quiet_NaN()),
      json(std::numeric_limits<double>::infinity()), json(""), json("plain words"),
      json("quote \" backslash \\ slash /"), json("\b\f\n\r\t"),
      json(std::string("nul \0 and \x01\x1f\x7f", 14)), json("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
      json::object(), json::array(), json::parse(R"({"b":[1,{"c":null}],"a":{"x":"y"},"":[[]]})"),
      json::parse(R"({"key \"quoted\"\n":"value\u0000"})"), json::binary({1, 2, 3}));
  CAPTURE(value.dump());
  CHECK(json_text(value) == value.dump());
}

// The reader and writer scan strings sixteen bytes at a time (SSE2), then eight, then one: every byte that
// needs a look must be found at every offset of a block and of the tail, and the bytes around it kept.
TEST_CASE("a byte that needs a look is found at every offset, by the writer and the reader", "[json]") {
  const std::string special = GENERATE(as<std::string>{}, "\"", "\\", "\n", std::string(1, '\0'), "\x1f",
                                       "\x7f", " ", "~", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80");
  for (std::size_t before = 0; before < 40; ++before) {
    for (const std::size_t after :
         {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{13}}) {
      const std::string text = std::string(before, 'a') + special + std::string(after, 'z');
      const json value(text);
      CAPTURE(before, after, value.dump());
      CHECK(json_text(value) == value.dump());
      const auto read = gpuadmit::k8s::parse_json(value.dump());
      REQUIRE(read);
      CHECK(read->get<std::string>() == text);
    }
  }
}

TEST_CASE("a raw control character or invalid UTF-8 is refused at every offset of a block", "[json]") {
  const std::string bad = GENERATE(as<std::string>{}, "\n", "\x01", "\x1f", "\xC3", "\xFF", "\xED\xA0\x80");
  for (std::size_t before = 0; before < 40; ++before) {
    const std::string text = '"' + std::string(before, 'a') + bad + "zzzzzzzzz\"";
    CAPTURE(before, bad);
    CHECK_FALSE(gpuadmit::k8s::parse_json(text));
  }
}

TEST_CASE("append_json appends after what the buffer holds", "[json]") {
  std::string out = "prefix:";
  append_json(out, json{{"a", 1}});
  CHECK(out == R"(prefix:{"a":1})");
}

TEST_CASE("json_text refuses invalid UTF-8 as dump does", "[json]") {
  const std::string text = GENERATE(as<std::string>{}, "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                    "ok \xFF", "\xE2\x82");
  const json value = json{{"message", text}};
  CAPTURE(text);
  int nlohmann_id = 0;
  try {
    (void)value.dump();
  } catch (const json::type_error& e) {
    nlohmann_id = e.id;
  }
  REQUIRE(nlohmann_id == 316);
  CHECK_THROWS_MATCHES(json_text(value), json::type_error,
                       Catch::Predicate<json::type_error>([](const auto& e) { return e.id == 316; }));
}

TEST_CASE("append_json_string can write U+FFFD for each byte that is not UTF-8 instead of throwing",
          "[json]") {
  struct Case {
    std::string text;
    std::string expected;
  };
  const Case c = GENERATE(Case{"ok \xFF", "ok \xEF\xBF\xBD"}, Case{"\xE2\x82", "\xEF\xBF\xBD\xEF\xBF\xBD"},
                          Case{"a\xC0\xAF\xC3\xA9", "a\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9"});
  std::string out;
  gpuadmit::k8s::append_json_string(out, c.text, gpuadmit::k8s::InvalidUtf8::kReplace);
  CAPTURE(out);
  CHECK(json::parse(out).get<std::string>() == c.expected);
}

TEST_CASE("json_text prints every fixture and example as dump does", "[json]") {
  std::size_t documents = 0;
  for (const char* folder : {"tests/fixtures", "deploy"}) {
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(std::filesystem::path(GPUADMIT_SOURCE_DIR) / folder)) {
      const auto extension = entry.path().extension();
      if (!entry.is_regular_file() || (extension != ".json" && extension != ".yaml")) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string text{std::istreambuf_iterator<char>(in), {}};
      auto parsed = gpuadmit::config::read_documents(text, entry.path().string());
      if (!parsed) continue;  // fixtures of malformed input
      for (const auto& document : *parsed) {
        CAPTURE(entry.path().string());
        CHECK(json_text(document.object) == document.object.dump());
        ++documents;
      }
    }
  }
  CHECK(documents > 30);  // the sweep found the files (40 when this was written)
}
