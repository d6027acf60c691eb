// The text helpers the k8s, cluster and server layers share.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "gpuadmit/common/text.hpp"

TEST_CASE("trim_space drops whitespace at both ends and keeps what is inside", "[text]") {
  struct Case {
    std::string_view input;
    std::string_view trimmed;
  };
  const auto c = GENERATE(values<Case>({
      {"", ""},
      {" \t\r\n", ""},
      {"token", "token"},
      {"  token\n", "token"},
      {"\ttwo words \r\n", "two words"},
      {"1Gi ", "1Gi"},
  }));
  CAPTURE(c.input);
  CHECK(gpuadmit::trim_space(c.input) == c.trimmed);
}

TEST_CASE("url_host brackets an IPv6 address and leaves names and IPv4 addresses alone", "[text]") {
  struct Case {
    std::string_view host;
    std::string_view written;
  };
  const auto c = GENERATE(values<Case>({
      {"127.0.0.1", "127.0.0.1"},
      {"localhost", "localhost"},
      {"::1", "[::1]"},
      {"fd00:10:96::1", "[fd00:10:96::1]"},
      {"", ""},
  }));
  CAPTURE(c.host);
  CHECK(gpuadmit::url_host(c.host) == c.written);
}
