#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../../../src/policy/json_diff.hpp"

using nlohmann::json;

// Our diff must produce what nlohmann::json::diff produces (the patches the webhook sent before it was
// rewritten for speed, and which the golden tests pin), and the patch must turn source into target.
TEST_CASE("json_diff matches nlohmann's diff and applies to the target", "[json_diff]") {
  auto [source_text, target_text] = GENERATE(table<std::string, std::string>({
      {R"({"a":1})", R"({"a":1})"},
      {R"({"a":1})", R"({"a":2})"},
      {R"({"a":1})", R"({"a":1.0})"},
      {R"({"a":1})", R"({"a":"1"})"},
      {R"({"a":1,"b":2})", R"({"b":2})"},
      {R"({"b":2})", R"({"a":{"x":[1,2]},"b":2})"},
      {R"({"a/b":1,"c~d":2})", R"({"a/b":3,"e~/f":4})"},
      {R"({"l":[1,2,3]})", R"({"l":[1,5]})"},
      {R"({"l":[1,2,3,4]})", R"({"l":[1]})"},
      {R"({"l":[]})", R"({"l":[{"k":"v"},2]})"},
      {R"({"l":[{"n":"a","r":{"cpu":"1"}}]})", R"({"l":[{"n":"a","r":{"cpu":"1","memory":"2Gi"}}]})"},
      {R"({"o":{"p":null}})", R"({"o":{"p":{"q":true}}})"},
      {R"([1,{"a":[true]}])", R"([1,{"a":[false,null]},"x"])"},
      {R"("s")", R"(["s"])"},
  }));
  CAPTURE(source_text, target_text);
  const json source = json::parse(source_text);
  const json target = json::parse(target_text);
  const json ours = gpuadmit::policy::json_diff(source, target);
  CHECK(ours == json::diff(source, target));
  CHECK(source.patch(ours) == target);
}

TEST_CASE("json_diff prefixes every path with the given pointer", "[json_diff]") {
  const json patch = gpuadmit::policy::json_diff(json{{"a", 1}}, json{{"a", 2}, {"b", 3}}, "/spec");
  REQUIRE(patch.size() == 2);
  CHECK(patch[0]["path"] == "/spec/a");
  CHECK(patch[1]["path"] == "/spec/b");
}
