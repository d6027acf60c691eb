// JsonDocument: the one form the policy reads an object in (the webhook's review, the CLI's manifests
// through OwnedJsonDocument, the tests).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/k8s/json_document.hpp"

using gpuadmit::k8s::JsonDocument;
using gpuadmit::k8s::OwnedJsonDocument;
using gpuadmit::k8s::same_json;
using gpuadmit::k8s::to_json;
using nlohmann::json;

TEST_CASE("a document keeps members sorted, the last of a repeated key, and decoded escapes", "[document]") {
  const std::string text = R"({"b":1,"a":{"z":true,"y":null},"b":"two","c":"tab\there","d":[1,-2,2.5,"x"]})";
  auto document = JsonDocument::parse(text, 8);
  REQUIRE(document.ok());
  const auto& root = document->root();
  std::vector<std::string> keys;
  for (const auto& member : root.members()) keys.emplace_back(member.key);
  CHECK(keys == std::vector<std::string>{"a", "b", "c", "d"});
  REQUIRE(root.find("b") != nullptr);
  CHECK(root.find("b")->string() == "two");
  CHECK(root.find("c")->string() == "tab\there");
  CHECK(root.find("missing") == nullptr);
  CHECK(root.find("b")->find("anything") == nullptr);  // not an object: no member, and no crash
  CHECK(root.find("a")->members()[0].key == "y");
  const auto& list = *root.find("d");
  REQUIRE(list.size() == 4);
  CHECK(list[1].integer() == -2);
  CHECK(list[0].unsigned_integer() == 1);
  CHECK(list[2].floating() == 2.5);
  CHECK(to_json(root) == json::parse(text));
  // A string without escapes is a view into the text: nothing copied.
  CHECK(list[3].string().data() >= text.data());
  CHECK(list[3].string().data() < text.data() + text.size());
}

TEST_CASE("two documents are the same JSON exactly when nlohmann's == says so", "[document]") {
  auto [left, right] = GENERATE(table<std::string, std::string>({
      {R"({"a":1,"b":[true,null,"x"]})", R"({"b":[true,null,"x"],"a":1})"},
      {R"(1)", R"(1.0)"},
      {R"(-1)", R"(18446744073709551615)"},
      {R"({"a":1})", R"({"a":1,"b":2})"},
      {R"([1,2])", R"([2,1])"},
      {R"("1")", R"(1)"},
      {R"({"a":{"b":{}}})", R"({"a":{"b":[]}})"},
      {R"(null)", R"(false)"},
      {R"("")", R"("")"},
  }));
  CAPTURE(left, right);
  auto a = JsonDocument::parse(left, 8);
  auto b = JsonDocument::parse(right, 8);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(same_json(a->root(), b->root()) == (json::parse(left) == json::parse(right)));
  CHECK(same_json(b->root(), a->root()) == (json::parse(left) == json::parse(right)));
}

TEST_CASE("an object held as nlohmann::json reads into a document that owns its text", "[document]") {
  const json object = {{"kind", "Pod"}, {"spec", {{"containers", {{{"name", "a"}}}}}}};
  auto document = OwnedJsonDocument::of(object);
  REQUIRE(document.ok());
  const OwnedJsonDocument moved = std::move(*document);  // the strings still view the moved text
  CHECK(to_json(moved.root()) == object);
  json deep = json::array();
  for (int i = 0; i < 200; ++i) deep = json::array({deep});
  auto too_deep = OwnedJsonDocument::of(deep);
  REQUIRE_FALSE(too_deep.ok());
  CHECK_THAT(too_deep.error().message, Catch::Contains("nest"));
}
