#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "gpuadmit/admission/json_patch.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/policy_checks.hpp"

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

namespace {

// RFC 4648 bit by bit: the plainest encoder, to check the fast one against.
std::string reference_base64(const std::string& in) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : in) {
    bits = (bits << 8U) | static_cast<unsigned char>(c);
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += alphabet[(bits >> static_cast<unsigned>(count)) & 63U];
    }
  }
  if (count > 0) out += alphabet[(bits << static_cast<unsigned>(6 - count)) & 63U];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

}  // namespace

TEST_CASE("base64 of every length and byte value matches RFC 4648", "[patch]") {
  std::string in;
  for (int length = 0; length <= 300; ++length) {
    CAPTURE(length);
    REQUIRE(base64_encode(in) == reference_base64(in));
    in += static_cast<char>((length * 97 + 13) % 256);  // every byte value appears
  }
}

TEST_CASE("a fix under a key with / and ~ is escaped as RFC 6901 says and applies back", "[patch]") {
  const nlohmann::json pod = nlohmann::json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"a~b/c":"1"}},)"
      R"("spec":{"containers":[{"name":"a","resources":{"requests":{"nvidia.com/gpu":"1"},"limits":{"cpu":"1","memory":"64Gi"}}}]}})");
  auto decision =
      gpuadmit::test::evaluate(pod, "ml", gpuadmit::policy::Mode::kMutate, gpuadmit::policy::RuleSet{});
  REQUIRE(decision.ok());
  CHECK(decision->patch.dump().find("/limits/nvidia.com~1gpu") != std::string::npos);
  const nlohmann::json fixed = pod.patch(decision->patch);
  CHECK(fixed["metadata"]["annotations"]["a~b/c"] == "1");
  CHECK(fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
}
