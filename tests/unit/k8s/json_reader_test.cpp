#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gpuadmit/k8s/json_input.hpp"

using gpuadmit::k8s::JsonLimits;
using gpuadmit::k8s::JsonPath;
using gpuadmit::k8s::parse_json;
using nlohmann::json;

namespace {

// Same value and same number types (nlohmann compares 1u == 1 == 1.0, dump does not).
bool identical(const json& a, const json& b) {
  return a == b && a.dump() == b.dump() && a.type() == b.type();
}

bool nlohmann_accepts(const std::string& text) {
  return json::accept(text);
}

// The deepest nesting of arrays and objects in a value (a scalar is 0, [] is 1), without recursing: the
// fixtures nest thousands deep.
std::size_t depth_of(const json& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const json*, std::size_t>> pending{{&root, 0}};
  while (!pending.empty()) {
    const auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    deepest = std::max(deepest, depth + 1);
    for (const json& item : *value) pending.emplace_back(&item, depth + 1);
  }
  return deepest;
}

}  // namespace

TEST_CASE("the reader accepts what nlohmann accepts and builds the same value", "[json]") {
  const std::string text = GENERATE(
      as<std::string>{}, "{}", "[]", " \t\r\n{ } ", "0", "-0", "12", "-12", "1.5", "-1.5e3", "1E+2", "1e-2",
      "0.000001", "18446744073709551615", "18446744073709551616", "-9223372036854775808",
      "-9223372036854775809", "true", "false", "null", R"("")", R"("plain")",
      R"("esc \" \\ \/ \b \f \n \r \t")", R"("\u0041\u00e9\u20ac\ud83d\ude00")", R"("\u0000")",
      "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"", R"({"a":1,"a":2})", R"({"b":1,"a":2,"b":3})",
      R"({"a":1,"b":2,"a":3,"a":4})", R"({"ab":1,"a":2,"ab":3,"abc":4,"a":5})",
      R"({"same-length-1":1,"same-length-2":2,"same-length-1":3})", R"( { "a" : [ 1 , { "b" : null } ] } )",
      R"({"b":[1,{"c":null}],"a":{"x":"y"}})", R"([[[]],[{}]])",
      R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"x","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  CAPTURE(text);
  REQUIRE(nlohmann_accepts(text));
  auto ours = parse_json(text);
  REQUIRE(ours.ok());
  CHECK(identical(*ours, json::parse(text)));
}

TEST_CASE("a large object with repeated keys keeps each key's last value, as nlohmann does", "[json]") {
  std::string text = "{";
  for (int i = 0; i < 90; ++i) {
    text += (i > 0 ? "," : "") + ("\"key-" + std::to_string((i * 7) % 40) + "\":" + std::to_string(i));
  }
  text += "}";
  CAPTURE(text);
  auto ours = parse_json(text);
  REQUIRE(ours.ok());
  CHECK(identical(*ours, json::parse(text)));
  CHECK(ours->size() == 40);
}

TEST_CASE("the reader rejects what nlohmann rejects, with line and column", "[json]") {
  const std::string text =
      GENERATE(as<std::string>{}, "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]",
               "01", "-", "1.", ".5", "1e", "1e+", "+1", "tru", "nul", "truex", "{} {}", "\"open",
               "\"bad \\x escape\"", "\"\\u12\"", "\"\\uZZZZ\"", "\"\\ud83d\"", "\"\\ud83d\\u0041\"",
               "\"\\ude00\"", "\"tab\there\"", "\"nl\nhere\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"",
               "\"\xF4\x90\x80\x80\"", "\"\xFF\"", "[\"\x80\"]", "NaN", "[Infinity]", "'single'");
  CAPTURE(text);
  REQUIRE_FALSE(nlohmann_accepts(text));
  auto ours = parse_json(text);
  REQUIRE_FALSE(ours.ok());
  CHECK_THAT(ours.error().message, Catch::StartsWith("malformed JSON: parse error at line "));
}

TEST_CASE("a syntax error names the line and column where it is", "[json]") {
  auto parsed = parse_json("{\n  \"a\": 1,\n  \"b\": tru\n}");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message == "malformed JSON: parse error at line 3, column 8: invalid literal");
}

TEST_CASE("a number beyond a double is an error, not infinity", "[json]") {
  auto parsed = parse_json("[1e400]");
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::EndsWith("number out of range"));
}

TEST_CASE("depth is bounded while parsing, also inside dropped members", "[json]") {
  const std::vector<JsonPath> drop{{"skip"}};
  auto kept = parse_json(R"({"a":[[[1]]]})", JsonLimits{1 << 20, 4});
  CHECK(kept.ok());
  auto too_deep = parse_json(R"({"a":[[[[1]]]]})", JsonLimits{1 << 20, 4});
  REQUIRE_FALSE(too_deep.ok());
  CHECK(too_deep.error().message == "nesting deeper than 4 levels");
  auto dropped_too_deep = parse_json(R"({"skip":[[[[1]]]]})", JsonLimits{1 << 20, 4}, drop);
  CHECK_FALSE(dropped_too_deep.ok());
}

TEST_CASE("dropped members are checked for syntax and left out", "[json]") {
  const std::vector<JsonPath> drop{{"request", "oldObject"},
                                   {"request", "object", "metadata", "managedFields"}};
  const std::string text =
      R"({"request":{"uid":"u","oldObject":{"big":[1,2,3]},"object":{"metadata":{"name":"p",)"
      R"("managedFields":[{"manager":"kubectl"}]},"managedFields":"kept: not under metadata"}},)"
      R"("oldObject":"kept: not under request"})";
  auto parsed = parse_json(text, {}, drop);
  REQUIRE(parsed.ok());
  json expected = json::parse(text);
  expected["request"].erase("oldObject");
  expected["request"]["object"]["metadata"].erase("managedFields");
  CHECK(identical(*parsed, expected));

  auto broken = parse_json(R"({"request":{"oldObject":{"big":[1,2,}}})", {}, drop);
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.error().message, Catch::Contains("line 1, column"));
}

TEST_CASE("every JSON fixture reads as nlohmann reads it, or is deeper than the limit", "[json]") {
  std::size_t files = 0;
  const JsonLimits limits{1 << 24, 128};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(GPUADMIT_FIXTURES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    // Saved fuzz inputs include the stated differences (BOM, NUL); fuzz_regressions_test checks those.
    if (entry.path().parent_path().parent_path().filename() == "fuzz") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    CAPTURE(entry.path().string());
    const bool accepted = nlohmann_accepts(text);
    auto ours = parse_json(text, limits);
    if (accepted && !ours.ok()) {
      // The one legitimate difference: nlohmann has no depth limit.
      CHECK(ours.error().message == "nesting deeper than 128 levels");
      CHECK(depth_of(json::parse(text)) > 128);
    } else {
      CHECK(ours.ok() == accepted);
      if (accepted) CHECK(identical(*ours, json::parse(text)));
    }
    ++files;
  }
  CHECK(files >= 2);
}

TEST_CASE("the depth limit itself is bounded, since the reader recurses", "[json]") {
  auto parsed = parse_json("[]", JsonLimits{1024, 100000});
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(parsed.error().message, Catch::Contains("at most 1000"));
}
