// clip_deep: a cluster object's subtrees nested deeper than the reader allows become null before parsing,
// so one tenant's object never fails a LIST page or a watch event.
#include <catch2/catch.hpp>

#include <string>

#include "gpuadmit/k8s/json_clip.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace {

std::string nested(std::size_t depth, const std::string& open, const std::string& close) {
  std::string out;
  for (std::size_t i = 0; i < depth; ++i) out += open;
  out += "1";
  for (std::size_t i = 0; i < depth; ++i) out += close;
  return out;
}

}  // namespace

TEST_CASE("clip_deep replaces what nests deeper than the limit with null, and only that", "[json]") {
  auto [text, limit, expected, subtrees] =
      GENERATE(table<std::string, std::size_t, std::string, std::size_t>({
          {R"({"a":[1,{"b":2}]})", 3, R"({"a":[1,{"b":2}]})", 0},
          {R"({"a":[1,{"b":2}]})", 2, R"({"a":[1,null]})", 1},
          {R"({"a":{"b":{}},"c":[[]]})", 2, R"({"a":{"b":null},"c":[null]})", 2},
          // Brackets inside strings, escaped quotes included, are text.
          {R"({"s":"[[[{\"","t":{"u":"]]}"}})", 2, R"({"s":"[[[{\"","t":{"u":"]]}"}})", 0},
          {R"({"s":"[[","t":{"u":[1]}})", 2, R"({"s":"[[","t":{"u":null}})", 1},
          // Not JSON: passed through for the parser to refuse.
          {R"({"a":[[[)", 1, R"({"a":[[[)", 0},
      }));
  CAPTURE(text, limit);
  const gpuadmit::k8s::Clipped clipped = gpuadmit::k8s::clip_deep(text, limit);
  CHECK(clipped.text == expected);
  CHECK(clipped.subtrees == subtrees);
}

TEST_CASE("a ResourceClaim whose opaque parameters nest 5,000 deep parses once clipped", "[json]") {
  // The API server keeps opaque parameters up to 10 KiB: 5,000 levels of [ fit.
  const std::string claim =
      R"({"items":[{"kind":"ResourceClaim","metadata":{"name":"deep"},"spec":{"devices":)"
      R"({"config":[{"opaque":{"driver":"gpu.nvidia.com","parameters":)" +
      nested(5000, "[", "]") + R"(}}]}}},{"kind":"ResourceClaim","metadata":{"name":"ok"}}]})";
  REQUIRE_FALSE(gpuadmit::k8s::parse_json(claim, {claim.size(), 64}).ok());
  const auto clipped = gpuadmit::k8s::clip_deep(claim, 64);
  CHECK(clipped.subtrees == 1);
  const auto parsed = gpuadmit::k8s::parse_json(clipped.text, {clipped.text.size(), 64});
  REQUIRE(parsed.ok());
  CHECK((*parsed)["items"].size() == 2);
  CHECK((*parsed)["items"][0]["metadata"]["name"] == "deep");
  CHECK((*parsed)["items"][1]["metadata"]["name"] == "ok");
}
