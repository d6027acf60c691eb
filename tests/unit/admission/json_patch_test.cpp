#include <catch2/catch.hpp>

#include "gpuadmit/admission/json_patch.hpp"

using gpuadmit::admission::base64_encode;
using gpuadmit::admission::make_patch;
using nlohmann::json;

TEST_CASE("base64 is the standard alphabet with padding", "[patch]") {
  auto [in, out] = GENERATE(table<std::string, std::string>({
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"\xff\xfe", "//4="},
  }));
  CHECK(base64_encode(in) == out);
}

TEST_CASE("a patch escapes / and ~ in keys and applies back to the mutated object", "[patch]") {
  const json original = json::parse(R"({"metadata":{"annotations":{"a~b/c":"1"}},"spec":{"containers":[{"resources":{}}]}})");
  json mutated = original;
  mutated["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
  mutated["metadata"]["annotations"]["a~b/c"] = "2";
  mutated["spec"]["tolerations"] = json::array({{{"key", "nvidia.com/gpu"}}});
  const json patch = make_patch(original, mutated);
  CHECK(patch.dump().find("a~0b~1c") != std::string::npos);
  CHECK(original.patch(patch) == mutated);
}

TEST_CASE("equal objects give an empty patch", "[patch]") {
  const json object = json::parse(R"({"a":[1,2,{"b":null}]})");
  CHECK(make_patch(object, object).empty());
}
