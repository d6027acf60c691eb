#include <catch2/catch.hpp>

#include "gpuadmit/admission/json_patch.hpp"
#include "gpuadmit/policy/evaluate.hpp"

using gpuadmit::admission::base64_encode;

TEST_CASE("base64 is the standard alphabet with padding", "[patch]") {
  auto [in, out] = GENERATE(table<std::string, std::string>({
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"\xff\xfe", "//4="},
  }));
  CHECK(base64_encode(in) == out);
  std::string body = R"({"patch":")";  // appending keeps what is already there
  gpuadmit::admission::append_base64(body, in);
  CHECK(body == R"({"patch":")" + out);
}

TEST_CASE("a fix under a key with / and ~ is escaped as RFC 6901 says and applies back", "[patch]") {
  const nlohmann::json pod = nlohmann::json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a~b/c":"1"}},)"
      R"("spec":{"containers":[{"name":"a","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"cpu":"1","memory":"64Gi"}}}]}})");
  auto decision =
      gpuadmit::policy::evaluate({pod, "ml", gpuadmit::policy::Mode::kMutate}, gpuadmit::policy::RuleSet{});
  REQUIRE(decision.ok());
  CHECK(decision->patch.dump().find("/limits/nvidia.com~1gpu") != std::string::npos);
  const nlohmann::json fixed = pod.patch(decision->patch);
  CHECK(fixed["metadata"]["annotations"]["a~b/c"] == "1");
  CHECK(fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
}
