#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gpuadmit/cluster/api_config.hpp"
#include "support/base64.hpp"

namespace gpuadmit::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

// A directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "gpuadmit-cluster-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  fs::path write(const std::string& name, const std::string& content) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string base64(const std::string& text) {
  return base64_encode(text);
}

std::string kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& current_context = "dev") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: " + current_context +
         "\ncontexts:\n- name: dev\n  context: {cluster: c1, user: u1}\n- name: other\n  context: {cluster: "
         "c2, user: u1}\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster +
         "- name: c2\n  cluster:\n    server: https://other:6443\n    certificate-authority-data: " +
         base64(kPem) + "\nusers:\n- name: u1\n  user:\n" + user;
}

}  // namespace

TEST_CASE("kubeconfig: what is supported is loaded", "[api-config]") {
  TempDir dir;
  dir.write("ca.crt", kPem);
  dir.write("token", "file-token\n");
  const std::string ca_data = "    certificate-authority-data: " + base64(kPem) + "\n";
  struct Case {
    const char* description;
    std::string cluster;
    std::string user;
    std::string host;
    std::uint16_t port;
    std::string prefix;
    bool client_certificate;
    std::string token;
    bool token_file;
  };
  const std::vector<Case> cases{
      {"client certificate and key as data, IP server with port",
       "    server: https://127.0.0.1:6443\n" + ca_data,
       "    client-certificate-data: " + base64("CERT") + "\n    client-key-data: " + base64("KEY") + "\n",
       "127.0.0.1", 6443, "", true, "", false},
      {"a bearer token, DNS server without port (443), CA file relative to the kubeconfig",
       "    server: https://api.example.com\n    certificate-authority: ca.crt\n", "    token: abc\n",
       "api.example.com", 443, "", false, "abc", false},
      {"a token file, IPv6 server, a path prefix",
       "    server: https://[fd00::1]:8443/k8s/clusters/c-1/\n" + ca_data, "    tokenFile: token\n",
       "fd00::1", 8443, "/k8s/clusters/c-1", false, "", true},
      {"client certificate files", "    server: https://10.0.0.1:6443\n" + ca_data,
       "    client-certificate: ca.crt\n    client-key: token\n", "10.0.0.1", 6443, "", true, "", false},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      const auto file = dir.write("config", kubeconfig(c.cluster, c.user));
      auto config = cluster::load_kubeconfig(file);
      REQUIRE(config.ok());
      CHECK(config->host == c.host);
      CHECK(config->port == c.port);
      CHECK(config->path_prefix == c.prefix);
      CHECK(config->ca_pem == kPem);
      // A CA file is re-read by the transport (a rotated CA); data is what it is.
      const bool ca_file = c.cluster.find("certificate-authority: ") != std::string::npos;
      CHECK(config->ca_file == (ca_file ? dir.path() / "ca.crt" : std::filesystem::path()));
      CHECK(config->client_certificate_pem.empty() != c.client_certificate);
      CHECK(config->token == c.token);
      CHECK(config->token_file.empty() != c.token_file);
      CHECK(config->source == "kubeconfig " + file.string() + " (context dev)");
    }
  }
}

TEST_CASE("kubeconfig: --context picks another context than current-context", "[api-config]") {
  TempDir dir;
  const auto file = dir.write(
      "config", kubeconfig("    server: https://a:1\n    certificate-authority-data: " + base64(kPem) + "\n",
                           "    token: t\n"));
  auto config = cluster::load_kubeconfig(file, "other");
  REQUIRE(config.ok());
  CHECK(config->host == "other");
  CHECK(config->url() == "https://other:6443");
}

TEST_CASE("kubeconfig: what is not supported is refused with a message naming the field", "[api-config]") {
  TempDir dir;
  const std::string server = "    server: https://127.0.0.1:6443\n";
  const std::string ca_data = "    certificate-authority-data: " + base64(kPem) + "\n";
  struct Case {
    const char* description;
    std::string text;
    std::string message;  // a substring of the error
  };
  const std::vector<Case> cases{
      {"an exec plugin of v1 without interactiveMode",
       kubeconfig(server + ca_data,
                  "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n"),
       "users[u1].user.exec.interactiveMode: required for client.authentication.k8s.io/v1"},
      {"an auth-provider", kubeconfig(server + ca_data, "    auth-provider:\n      name: gcp\n"),
       "users[u1].user.auth-provider: not supported (kubectl removed the gcp and azure providers"},
      {"basic authentication", kubeconfig(server + ca_data, "    username: admin\n    password: secret\n"),
       "basic authentication is not supported"},
      {"impersonation", kubeconfig(server + ca_data, "    token: t\n    as: someone\n"),
       "impersonation is not supported"},
      {"skipping TLS verification and a CA together (client-go refuses it too)",
       kubeconfig(server + "    insecure-skip-tls-verify: true\n" + ca_data, "    token: t\n"),
       "clusters[c1].cluster: insecure-skip-tls-verify together with a certificate-authority"},
      {"no CA at all", kubeconfig(server, "    token: t\n"), "no certificate-authority"},
      {"a plain http server", kubeconfig("    server: http://127.0.0.1:8080\n" + ca_data, "    token: t\n"),
       "only https:// URLs are supported"},
      {"a port out of range", kubeconfig("    server: https://127.0.0.1:70000\n" + ca_data, "    token: t\n"),
       "invalid port"},
      {"an https proxy",
       kubeconfig(server + ca_data + "    proxy-url: https://proxy:443\n", "    token: t\n"),
       "clusters[c1].cluster.proxy-url: proxy URL \"https://proxy:443\": only http://, socks5:// and "
       "socks5h://"},
      {"a certificate without its key",
       kubeconfig(server + ca_data, "    client-certificate-data: " + base64("C") + "\n"),
       "client-certificate and client-key must be given together"},
      {"invalid base64 data",
       kubeconfig(server + "    certificate-authority-data: '!!!'\n", "    token: t\n"),
       "certificate-authority-data: invalid base64"},
      {"a CA file that does not exist",
       kubeconfig(server + "    certificate-authority: missing.crt\n", "    token: t\n"), "missing.crt"},
      {"a current-context that does not exist", kubeconfig(server + ca_data, "    token: t\n", "nope"),
       "no context named \"nope\""},
      {"no current-context", "apiVersion: v1\nkind: Config\n", "no current-context"},
      {"not YAML", "clusters: [unclosed", "kubeconfig "},
      {"not a map", "- a\n- b\n", "expected a map at the top level"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      const auto file = dir.write("config", c.text);
      auto config = cluster::load_kubeconfig(file);
      REQUIRE_FALSE(config.ok());
      CHECK_THAT(config.error().message, Catch::Contains(c.message));
      CHECK_THAT(config.error().message, Catch::StartsWith("kubeconfig " + file.string()));
    }
  }
}

TEST_CASE("kubeconfig: a missing file is an error naming it", "[api-config]") {
  auto config = cluster::load_kubeconfig("/nonexistent/kubeconfig");
  REQUIRE_FALSE(config.ok());
  CHECK_THAT(config.error().message, Catch::Contains("/nonexistent/kubeconfig"));
}

TEST_CASE("in-cluster: the service host and port come from the environment, token and CA from the mount",
          "[api-config]") {
  TempDir dir;
  cluster::InClusterPaths paths{dir.write("token", "tok"), dir.write("ca.crt", kPem)};
  const std::map<std::string, std::string> env{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                               {"KUBERNETES_SERVICE_PORT", "443"}};
  auto config = cluster::in_cluster_config(paths, &env);
  REQUIRE(config.ok());
  CHECK(config->url() == "https://10.96.0.1:443");
  CHECK(config->ca_pem == kPem);
  CHECK(config->ca_file == paths.ca);
  CHECK(config->token_file == paths.token);
  CHECK(config->token.empty());
  CHECK(config->source == "in-cluster");
}

TEST_CASE("in-cluster: outside a pod, or without the mounted files, the error says what is missing",
          "[api-config]") {
  TempDir dir;
  const std::map<std::string, std::string> good{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                {"KUBERNETES_SERVICE_PORT", "443"}};
  const std::map<std::string, std::string> no_env;
  const std::map<std::string, std::string> bad_port{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                    {"KUBERNETES_SERVICE_PORT", "https"}};
  struct Case {
    const char* description;
    const std::map<std::string, std::string>* env;
    bool token;
    bool ca;
    std::string message;
  };
  const std::vector<Case> cases{
      {"no service environment", &no_env, true, true, "not running in a pod"},
      {"a port that is not a number", &bad_port, true, true, "KUBERNETES_SERVICE_PORT: invalid port"},
      {"no token mounted", &good, false, true, "service-account token"},
      {"no CA mounted", &good, true, false, "service-account CA"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      cluster::InClusterPaths paths{dir.path() / "absent-token", dir.path() / "absent-ca"};
      if (c.token) paths.token = dir.write("token", "tok");
      if (c.ca) paths.ca = dir.write("ca.crt", kPem);
      auto config = cluster::in_cluster_config(paths, c.env);
      REQUIRE_FALSE(config.ok());
      CHECK_THAT(config.error().message, Catch::Contains(c.message));
    }
  }
}

TEST_CASE("base64 decoding accepts padding and line breaks and rejects junk", "[api-config]") {
  const std::vector<std::tuple<std::string, bool, std::string>> cases{
      {"", true, ""},
      {"YQ==", true, "a"},
      {"YWI=", true, "ab"},
      {"YWJj", true, "abc"},
      {"YWJj\nZGVm\n", true, "abcdef"},
      {"YQ", true, "a"},
      {"Y", false, ""},
      {"YQ==YQ==", false, ""},
      {"YW*j", false, ""},
  };
  for (const auto& [input, ok, output] : cases) {
    auto decoded = cluster::decode_base64(input);
    INFO("input: " << input);
    CHECK(decoded.ok() == ok);
    if (ok && decoded.ok()) CHECK(*decoded == output);
  }
}

}  // namespace gpuadmit::test
