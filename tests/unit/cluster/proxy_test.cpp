// Proxies as kubectl uses them (#53 item 1): a cluster's proxy-url, else HTTPS_PROXY unless NO_PROXY exempts
// the API server, by the rules of Go's golang.org/x/net/http/httpproxy (its own test table has most of
// these cases: httpproxy/proxy_test.go, TestUseProxy and TestInvalidNoProxy).
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/proxy.hpp"
#include "support/base64.hpp"
#include "support/scratch_dir.hpp"

namespace gpuadmit::test {
namespace {

constexpr const char* kProxyTestCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

}  // namespace

TEST_CASE("a proxy URL is read as Go reads it; an https proxy is refused", "[proxy]") {
  struct Case {
    const char* rule;
    std::string url;
    std::string host;  // "" when refused
    int port;
    std::string authorization;  // or, when refused, a part of the error
    std::string shown = "";
  };
  const std::vector<Case> cases{
      {"host and port", "http://proxy.corp:3128", "proxy.corp", 3128, "", "http://proxy.corp:3128"},
      {"no port: 80, as for any http URL", "http://proxy.corp/", "proxy.corp", 80, "",
       "http://proxy.corp:80"},
      {"no scheme: http", "10.0.0.1:8080", "10.0.0.1", 8080, "", "http://10.0.0.1:8080"},
      {"user and password: Basic, and the password is not shown", "http://ml%40corp:s3cr%3At@proxy:3128",
       "proxy", 3128, "Basic " + base64_encode("ml@corp:s3cr:t"), "http://ml%40corp@proxy:3128"},
      {"an IPv6 proxy", "http://[fd00::1]:3128", "fd00::1", 3128, "", "http://[fd00::1]:3128"},
      {"a SOCKS5 proxy (ssh -D): port 1080 by default", "socks5://127.0.0.1", "127.0.0.1", 1080, "",
       "socks5://127.0.0.1:1080"},
      {"socks5h, the same to Go", "socks5h://jump:9050", "jump", 9050, "", "socks5h://jump:9050"},
      {"an https proxy", "https://proxy:443", "", 0,
       "only http://, socks5:// and socks5h:// proxies are supported; not https://"},
      {"a port out of range", "http://proxy:99999", "", 0, "the port is not 1-65535"},
      {"a path", "http://proxy:3128/some/path", "", 0, "a proxy URL has no path"},
      {"no host", "http://:3128", "", 0, "no host"},
      {"a broken escape", "http://a%4:b@proxy", "", 0, "a bad %-escape"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto proxy = cluster::parse_proxy_url(c.url);
    if (c.host.empty()) {
      REQUIRE_FALSE(proxy);
      CHECK_THAT(proxy.error().message, Catch::Contains(c.authorization));
      continue;
    }
    REQUIRE(proxy);
    CHECK(proxy->host == c.host);
    CHECK(proxy->port == c.port);
    CHECK(cluster::basic_authorization(*proxy) == c.authorization);
    CHECK((proxy->scheme == cluster::ProxyScheme::kSocks5) == c.url.starts_with("socks5"));
    CHECK(proxy->url == c.shown);
  }
}

TEST_CASE("NO_PROXY exempts hosts by Go's rules", "[proxy]") {
  struct Case {
    const char* rule;
    std::string no_proxy;
    std::string host;
    int port;
    bool exempt;
  };
  const std::vector<Case> cases{
      {"an empty list exempts nothing", "", "api.corp", 443, false},
      {"* exempts every host", "*", "api.corp", 443, true},
      {"a name exempts itself", "api.corp", "api.corp", 443, true},
      {"a name exempts its subdomains", "corp", "api.corp", 443, true},
      {"a name does not exempt a longer name that only ends like it", "corp", "notcorp", 443, false},
      {"a leading dot exempts subdomains only", ".corp", "corp", 443, false},
      {"a leading dot exempts a subdomain", ".corp", "api.corp", 443, true},
      {"*. is a leading dot", "*.corp", "api.corp", 443, true},
      {"case does not matter", "API.Corp", "api.CORP", 443, true},
      {"a port narrows a name", "api.corp:6443", "api.corp", 443, false},
      {"the same port matches", "api.corp:6443", "api.corp", 6443, true},
      {"an IP exempts that address", "10.96.0.1", "10.96.0.1", 443, true},
      {"an IP does not exempt another", "10.96.0.1", "10.96.0.2", 443, false},
      {"a CIDR exempts its addresses", "10.96.0.0/12", "10.100.3.4", 443, true},
      {"a CIDR does not exempt addresses outside it", "10.96.0.0/12", "10.112.0.1", 443, false},
      {"an IPv6 CIDR", "fd00::/8", "fd12::1", 443, true},
      {"a CIDR does not exempt a name", "10.0.0.0/8", "api.corp", 443, false},
      {"entries are trimmed and empty ones skipped", " , other.corp ,, api.corp ", "api.corp", 443, true},
      {"an IPv6 address with a port", "[fd00::1]:443", "fd00::1", 443, true},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    CHECK(cluster::no_proxy_exempts(c.no_proxy, c.host, static_cast<std::uint16_t>(c.port)) == c.exempt);
  }
}

TEST_CASE("the environment's proxy: HTTPS_PROXY before https_proxy, never for loopback, NO_PROXY exempts",
          "[proxy]") {
  using Env = std::map<std::string, std::string>;
  struct Case {
    const char* rule;
    Env env;
    std::string host;
    std::string proxy;  // the proxy's host, "" for none
  };
  const std::vector<Case> cases{
      {"no variable: no proxy", {}, "api.corp", ""},
      {"HTTPS_PROXY", {{"HTTPS_PROXY", "http://p1:3128"}}, "api.corp", "p1"},
      {"https_proxy when HTTPS_PROXY is not set", {{"https_proxy", "http://p2:3128"}}, "api.corp", "p2"},
      {"HTTPS_PROXY before https_proxy",
       {{"HTTPS_PROXY", "http://p1:3128"}, {"https_proxy", "http://p2:3128"}},
       "api.corp",
       "p1"},
      {"HTTP_PROXY is for http:// URLs only", {{"HTTP_PROXY", "http://p3:3128"}}, "api.corp", ""},
      {"localhost is never proxied", {{"HTTPS_PROXY", "http://p1:3128"}}, "localhost", ""},
      {"nor a loopback address", {{"HTTPS_PROXY", "http://p1:3128"}}, "127.0.0.1", ""},
      {"nor IPv6's", {{"HTTPS_PROXY", "http://p1:3128"}}, "::1", ""},
      {"NO_PROXY exempts", {{"HTTPS_PROXY", "http://p1:3128"}, {"NO_PROXY", ".corp"}}, "api.corp", ""},
      {"no_proxy too", {{"HTTPS_PROXY", "http://p1:3128"}, {"no_proxy", "10.96.0.0/12"}}, "10.96.0.1", ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto proxy = cluster::proxy_from_environment(c.host, 443, &c.env);
    REQUIRE(proxy);
    CHECK((*proxy ? (*proxy)->host : std::string()) == c.proxy);
  }
  const Env tls{{"HTTPS_PROXY", "https://p:443"}};
  auto refused = cluster::proxy_from_environment("api.corp", 443, &tls);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::StartsWith("HTTPS_PROXY: proxy URL \"https://p:443\"") &&
                                          Catch::EndsWith("(or exempt the API server in NO_PROXY)"));
}

TEST_CASE("a kubeconfig's proxy-url is used; the service account's config takes the environment's",
          "[proxy]") {
  ScratchDir dir;
  const auto file =
      dir.write("config", std::string("apiVersion: v1\nkind: Config\ncurrent-context: c\n") +
                              "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
                              "clusters: [{name: k, cluster: {server: 'https://api.corp:6443', "
                              "proxy-url: 'http://user:pw@proxy.corp:3128', "
                              "certificate-authority-data: " +
                              base64_encode(kProxyTestCa) + "}}]\nusers: [{name: u, user: {token: t}}]\n");
  auto config = cluster::load_kubeconfig(file);
  REQUIRE(config);
  REQUIRE(config->proxy);
  CHECK(config->proxy->host == "proxy.corp");
  CHECK(config->proxy->user_info == "user:pw");

  cluster::InClusterPaths paths{dir.write("token", "tok"), dir.write("ca.crt", kProxyTestCa)};
  const std::map<std::string, std::string> env{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                               {"KUBERNETES_SERVICE_PORT", "443"},
                                               {"HTTPS_PROXY", "http://egress:3128"}};
  auto in_cluster = cluster::in_cluster_config(paths, &env);
  REQUIRE(in_cluster);
  REQUIRE(in_cluster->proxy);
  CHECK(in_cluster->proxy->url == "http://egress:3128");
  std::map<std::string, std::string> exempt = env;
  exempt["NO_PROXY"] = "10.96.0.0/12,.svc";
  auto direct = cluster::in_cluster_config(paths, &exempt);
  REQUIRE(direct);
  CHECK_FALSE(direct->proxy);
}

}  // namespace gpuadmit::test
