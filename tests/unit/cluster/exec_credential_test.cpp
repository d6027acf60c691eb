// Credential plugins as client-go runs them: the kubeconfig's exec entry, the plugin's ExecCredential, the
// run itself (environment, standard input, failures with what to do) and the cache until expiry.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/exec_credential.hpp"
#include "support/base64.hpp"
#include "support/scratch_dir.hpp"

namespace gpuadmit::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr const char* kV1 = "client.authentication.k8s.io/v1";
constexpr const char* kPluginCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

using Dir = ScratchDir;

std::string kubeconfig_with_exec(const std::string& exec) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, "
         "user: u}\n"
         "clusters:\n- name: k\n  cluster:\n    server: https://api.example:6443\n    certificate-authority: "
         "ca.crt\n"
         "    extensions:\n    - name: client.authentication.k8s.io/exec\n      extension: {audience: gke}\n"
         "users:\n- name: u\n  user:\n    exec:\n" +
         exec;
}

cluster::ExecPlugin plugin_at(const fs::path& command) {
  return cluster::ExecPlugin{command.string(), {}, {}, kV1, "", cluster::InteractiveMode::kNever,
                             "test exec",      ""};
}

// Runs with standard input on /dev/null, as CI runs: not a terminal.
Result<cluster::ExecCredential> run_without_terminal(const cluster::ExecPlugin& plugin) {
  const int saved = ::dup(STDIN_FILENO);
  const int null = ::open("/dev/null", O_RDONLY);
  ::dup2(null, STDIN_FILENO);
  ::close(null);
  auto result = cluster::run_exec_plugin(plugin, std::chrono::seconds(10));
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return result;
}

}  // namespace

TEST_CASE("kubeconfig exec: what client-go accepts is read, relative commands against the file", "[exec]") {
  Dir dir;
  dir.write("ca.crt", kPluginCa);
  const fs::path file = dir.write(
      "config", kubeconfig_with_exec(
                    "      command: ./bin/login\n      apiVersion: client.authentication.k8s.io/v1\n"
                    "      args: [get-token, --cluster, k]\n      env: [{name: AWS_PROFILE, value: ml}]\n"
                    "      interactiveMode: Never\n      installHint: install login\n"
                    "      provideClusterInfo: true\n"));
  auto config = cluster::load_kubeconfig(file);
  REQUIRE(config);
  REQUIRE(config->exec);
  const cluster::ExecPlugin& exec = *config->exec;
  CHECK(exec.command == (dir.path() / "./bin/login").string());
  CHECK(exec.args == std::vector<std::string>{"get-token", "--cluster", "k"});
  CHECK(exec.env == std::vector<std::pair<std::string, std::string>>{{"AWS_PROFILE", "ml"}});
  CHECK(exec.interactive_mode == cluster::InteractiveMode::kNever);
  CHECK(exec.install_hint == "install login");
  CHECK_THAT(exec.where, Catch::Contains("users[u].user.exec"));
  const json info = json::parse(cluster::exec_info_json(exec, false));
  CHECK(info["kind"] == "ExecCredential");
  CHECK(info["spec"]["interactive"] == false);
  CHECK(info["spec"]["cluster"]["server"] == "https://api.example:6443");
  CHECK(info["spec"]["cluster"]["certificate-authority-data"] ==
        base64_encode(kPluginCa));  // an independent encoder
  CHECK(info["spec"]["cluster"]["config"] == json{{"audience", "gke"}});

  const fs::path beta =
      dir.write("beta", kubeconfig_with_exec("      command: gke-gcloud-auth-plugin\n"
                                             "      apiVersion: client.authentication.k8s.io/v1beta1\n"));
  auto v1beta1 = cluster::load_kubeconfig(beta);
  REQUIRE(v1beta1);
  CHECK(v1beta1->exec->command == "gke-gcloud-auth-plugin");  // a bare name: looked up on the PATH
  CHECK(v1beta1->exec->interactive_mode == cluster::InteractiveMode::kIfAvailable);
  CHECK(v1beta1->exec->cluster_info_json.empty());
}

TEST_CASE("kubeconfig exec: what client-go refuses is refused, naming the field", "[exec]") {
  Dir dir;
  dir.write("ca.crt", kPluginCa);
  struct Case {
    const char* rule;
    std::string exec;
    std::string user_extra;
    std::string message;
  };
  const std::vector<Case> cases{
      {"v1 needs interactiveMode", "      command: x\n      apiVersion: client.authentication.k8s.io/v1\n",
       "", "exec.interactiveMode: required"},
      {"v1alpha1 was removed", "      command: x\n      apiVersion: client.authentication.k8s.io/v1alpha1\n",
       "", "v1alpha1 was removed"},
      {"a command is needed", "      apiVersion: client.authentication.k8s.io/v1beta1\n", "",
       "exec.command: missing"},
      {"an unknown interactiveMode",
       "      command: x\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: "
       "Sometimes\n",
       "", "\"Sometimes\" is not Never, IfAvailable or Always"},
      {"an env entry without a name",
       "      command: x\n      apiVersion: client.authentication.k8s.io/v1beta1\n      env: [{value: v}]\n",
       "", "exec.env: each entry needs a name"},
      {"exec and a token together",
       "      command: x\n      apiVersion: client.authentication.k8s.io/v1beta1\n", "    token: t\n",
       "give one way to authenticate"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    const fs::path file = dir.write("config", kubeconfig_with_exec(c.exec) + c.user_extra);
    auto config = cluster::load_kubeconfig(file);
    REQUIRE_FALSE(config);
    CHECK_THAT(config.error().message, Catch::Contains(c.message) && Catch::Contains("users[u].user"));
  }
}

TEST_CASE("an ExecCredential is read as client-go reads it", "[exec]") {
  const cluster::ExecPlugin plugin = plugin_at("p");
  struct Case {
    const char* rule;
    std::string output;
    std::string token;    // what is read (with `certificate`)
    std::string message;  // a part of the error; "" when the output is read
    std::string certificate = "";
  };
  const std::vector<Case> cases{
      {"a token without expiry",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t1"}})",
       "t1", ""},
      {"a token with an RFC 3339 expiry and an offset",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t2","expirationTimestamp":"2030-01-02T03:04:05.123+01:00"}})",
       "t2", ""},
      {"another apiVersion than the kubeconfig's",
       R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}})",
       "", "not the kubeconfig's"},
      {"not JSON", "Please log in", "", "is not a JSON object"},
      {"neither a token nor a client certificate",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})", "",
       "no status.token and no status.clientCertificateData"},
      {"a client certificate and its key, without a token",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K"}})",
       "", "", "C"},
      {"a token and a client certificate together",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t3","clientCertificateData":"C","clientKeyData":"K"}})",
       "t3", "", "C"},
      {"a client certificate without its key",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","clientCertificateData":"C"}})",
       "", "clientCertificateData without clientKeyData: a client certificate needs both"},
      {"a key without its certificate",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientKeyData":"K"}})",
       "", "clientKeyData without clientCertificateData"},
      {"a token that is not a string",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":7}})", "",
       "status.token is not a string"},
      {"an expiry that is no time",
       R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"tomorrow"}})",
       "", "not an RFC 3339 time"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto credential = cluster::parse_exec_credential(c.output, plugin);
    if (!c.message.empty()) {
      REQUIRE_FALSE(credential);
      CHECK_THAT(credential.error().message, Catch::Contains(c.message));
    } else {
      REQUIRE(credential);
      CHECK(credential->token == c.token);
      CHECK(credential->client_certificate_pem == c.certificate);
      CHECK(credential->client_key_pem == (c.certificate.empty() ? "" : "K"));
    }
  }
  auto dated = cluster::parse_exec_credential(cases[1].output, plugin);
  REQUIRE(dated);
  REQUIRE(dated->expires);
  CHECK(std::chrono::system_clock::to_time_t(*dated->expires) == 1893549845);  // 2030-01-02T02:04:05Z
}

TEST_CASE("a plugin run: its environment, no terminal in CI, and failures that say what to do", "[exec]") {
  Dir dir;
  const std::string ok =
      R"(printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN")";
  const fs::path info = dir.path() / "info.json";
  const fs::path good = dir.write(
      "good.sh", "#!/bin/sh\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" >" + info.string() + "\n" + ok + "\n",
      true);
  cluster::ExecPlugin plugin = plugin_at(good);
  plugin.env = {{"TOKEN", "from-env"}};
  plugin.interactive_mode = cluster::InteractiveMode::kIfAvailable;
  auto credential = run_without_terminal(plugin);
  REQUIRE(credential);
  CHECK(credential->token == "from-env");
  const json exec_info = json::parse(std::ifstream(info));
  CHECK(exec_info["spec"]["interactive"] == false);  // IfAvailable, and no terminal

  struct Case {
    const char* rule;
    std::string script;  // "" : a command that does not exist
    cluster::InteractiveMode mode;
    std::string message;
  };
  const std::vector<Case> cases{
      {"a missing command gives its installHint", "", cluster::InteractiveMode::kNever,
       "No such file or directory. Install the login plugin"},
      {"a plugin that fails points at its own messages", "#!/bin/sh\necho 'token expired' >&2\nexit 3\n",
       cluster::InteractiveMode::kNever, "failed (exit status 3); its messages are above"},
      {"interactiveMode Always without a terminal is refused before it runs", "#!/bin/sh\n" + ok + "\n",
       cluster::InteractiveMode::kAlways, "interactiveMode is Always, but standard input is not a terminal"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    cluster::ExecPlugin failing =
        plugin_at(c.script.empty() ? dir.path() / "no-such-plugin" : dir.write("p.sh", c.script, true));
    failing.install_hint = "Install the login plugin";
    failing.interactive_mode = c.mode;
    auto result = run_without_terminal(failing);
    REQUIRE_FALSE(result);
    CHECK_THAT(result.error().message, Catch::Contains(c.message) && Catch::Contains("test exec"));
  }
}

TEST_CASE("the cache runs the plugin again only when the token expires or is refused", "[exec]") {
  Dir dir;
  // Each run prints token run-N; the expiry is the one in the file `expiry` (none when empty).
  const fs::path expiry = dir.write("expiry", "");
  const fs::path plugin = dir.write(
      "p.sh",
      "#!/bin/sh\nn=$(($(cat \"$0.count\" 2>/dev/null || echo 0) + 1)); echo $n >\"$0.count\"\ne=$(cat " +
          expiry.string() +
          ")\nprintf "
          "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{"
          "\"token\":\"run-%s\"%s}}' $n \"${e:+,\\\"expirationTimestamp\\\":\\\"$e\\\"}\"\n",
      true);
  cluster::ExecCredentialCache cache(plugin_at(plugin));
  const auto token = [&cache] { return cache.credential().value().token; };
  const auto refuse = [&cache](const std::string& sent) { cache.refused(cluster::ExecCredential{sent}); };
  CHECK(token() == "run-1");
  CHECK(token() == "run-1");  // no expiry: kept
  refuse("someone-else's");   // not the cached one: kept
  CHECK(token() == "run-1");
  refuse("run-1");
  CHECK(token() == "run-2");
  // Expiring within the 10 s margin: fetched again on every call.
  std::ofstream(expiry) << "2000-01-01T00:00:00Z";
  refuse("run-2");
  CHECK(token() == "run-3");
  CHECK(token() == "run-4");
  std::ofstream(expiry) << "2999-01-01T00:00:00Z";
  CHECK(token() == "run-5");
  CHECK(token() == "run-5");
  CHECK(cache.runs() == 5);
}

}  // namespace gpuadmit::test
