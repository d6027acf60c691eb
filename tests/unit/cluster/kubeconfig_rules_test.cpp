// kubectl's kubeconfig loading rules
// (https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/, "Merging kubeconfig
// files"; client-go's clientcmd/loader.go): which files, how several merge, and what
// --context, --cluster and --user change. Each case is one of those documented rules.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gpuadmit/cluster/api_config.hpp"
#include "support/scratch_dir.hpp"

namespace gpuadmit::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCa = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

using Dir = ScratchDir;

// A cluster entry trusting ./ca.crt (relative: resolved against the file that names it).
std::string cluster(const std::string& name, const std::string& server) {
  return "- name: " + name + "\n  cluster: {server: '" + server + "', certificate-authority: ca.crt}\n";
}
std::string user(const std::string& name, const std::string& token) {
  return "- name: " + name + "\n  user: {token: " + token + "}\n";
}
std::string context(const std::string& name, const std::string& cluster_name, const std::string& user_name,
                    const std::string& ns = "") {
  return "- name: " + name + "\n  context: {cluster: " + cluster_name + ", user: " + user_name +
         (ns.empty() ? "" : ", namespace: " + ns) + "}\n";
}
std::string config(const std::string& current, const std::string& clusters, const std::string& users,
                   const std::string& contexts) {
  return "apiVersion: v1\nkind: Config\n" + (current.empty() ? "" : "current-context: " + current + "\n") +
         (clusters.empty() ? "" : "clusters:\n" + clusters) + (users.empty() ? "" : "users:\n" + users) +
         (contexts.empty() ? "" : "contexts:\n" + contexts);
}

}  // namespace

TEST_CASE("kubeconfig files: --kubeconfig, else $KUBECONFIG's list, else ~/.kube/config, else in-cluster",
          "[kubeconfig-rules]") {
  Dir dir;
  const fs::path home_config = dir.write("home/.kube/config", "x");
  const fs::path a = dir.write("a.yaml", "x");
  const fs::path b = dir.write("b.yaml", "x");
  const std::string list = a.string() + ":" + (dir.path() / "missing.yaml").string() + "::" + b.string();
  struct Case {
    const char* rule;
    std::optional<std::string> flag;
    std::string env;
    fs::path home;
    std::vector<fs::path> want;
  };
  const std::vector<Case> cases{
      {"--kubeconfig wins over everything", a.string(), b.string(), dir.path() / "home", {a}},
      {"$KUBECONFIG: its files in order, empty and missing entries skipped",
       {},
       list,
       dir.path() / "home",
       {a, b}},
      {"no $KUBECONFIG: ~/.kube/config", {}, "", dir.path() / "home", {home_config}},
      {"no $KUBECONFIG and no ~/.kube/config: none (in-cluster)", {}, "", dir.path() / "nohome", {}},
      {"$KUBECONFIG whose files are all missing: none (in-cluster)",
       {},
       (dir.path() / "missing.yaml").string(),
       dir.path() / "home",
       {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    const cluster::KubeconfigFiles files = cluster::kubeconfig_files(c.flag, c.env, c.home);
    CHECK(files.paths == c.want);
  }
}

TEST_CASE("kubeconfig merge: the first file to set a name or current-context wins, whole entries only",
          "[kubeconfig-rules]") {
  Dir dir;
  dir.write("one/ca.crt", kCa);
  dir.write("two/ca.crt", kCa);
  // one: current-context a, cluster c1, user u1 (token one). two: current-context b, cluster c1 again
  // (another server), c2, user u1 again (another token), u2, contexts a (unused: one has no a) and b.
  const fs::path one =
      dir.write("one/config", config("a", cluster("c1", "https://one:6443"), user("u1", "one"), ""));
  const fs::path two = dir.write(
      "two/config", config("b", cluster("c1", "https://two:6443") + cluster("c2", "https://two-c2:6443"),
                           user("u1", "two") + user("u2", "two-u2"),
                           context("a", "c1", "u1", "team-a") + context("b", "c2", "u2")));
  struct Case {
    const char* rule;
    cluster::KubeconfigSelection selection;
    std::string host, token, ns;
    fs::path ca_file;
  };
  const std::vector<Case> cases{
      {"current-context from the first file that sets it; its entries from the first file naming them",
       {},
       "one",
       "one",
       "team-a",
       dir.path() / "one/ca.crt"},
      {"--context picks another context, found in the second file",
       {"b", "", ""},
       "two-c2",
       "two-u2",
       "",
       dir.path() / "two/ca.crt"},
      {"--cluster replaces the context's cluster",
       {"", "c2", ""},
       "two-c2",
       "one",
       "team-a",
       dir.path() / "two/ca.crt"},
      {"--user replaces the context's user",
       {"", "", "u2"},
       "one",
       "two-u2",
       "team-a",
       dir.path() / "one/ca.crt"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto loaded = cluster::load_kubeconfigs({one, two}, c.selection);
    REQUIRE(loaded);
    CHECK(loaded->host == c.host);
    CHECK(loaded->token == c.token);
    CHECK(loaded->namespace_ == c.ns);
    CHECK(loaded->ca_file == c.ca_file);
  }
}

TEST_CASE("kubeconfig merge: what is missing or malformed is named with its file", "[kubeconfig-rules]") {
  Dir dir;
  dir.write("ca.crt", kCa);
  const fs::path good = dir.write(
      "good", config("a", cluster("c1", "https://one:6443"), user("u1", "t"), context("a", "c1", "u1")));
  const fs::path bad = dir.write("bad", "clusters: {not: a list}\n");
  const fs::path empty = dir.write("empty", "");
  struct Case {
    const char* rule;
    std::vector<fs::path> files;
    cluster::KubeconfigSelection selection;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases{
      {"a file that cannot be read as a kubeconfig is an error, even after a good one",
       {good, bad},
       {},
       {bad.string(), "clusters: expected a list"}},
      {"--context that no file has", {good}, {"nope", "", ""}, {"no context named \"nope\"", good.string()}},
      {"--cluster that no file has", {good}, {"", "nope", ""}, {"no cluster named \"nope\""}},
      {"--user that no file has", {good}, {"", "", "nope"}, {"no user named \"nope\""}},
      {"no current-context anywhere and no --context", {empty}, {}, {"no current-context", "--context"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    auto loaded = cluster::load_kubeconfigs(c.files, c.selection);
    REQUIRE_FALSE(loaded);
    for (const std::string& part : c.message) CHECK_THAT(loaded.error().message, Catch::Contains(part));
  }
}

TEST_CASE("kubeconfig: insecure-skip-tls-verify is honoured without a CA, as kubectl honours it",
          "[kubeconfig-rules]") {
  Dir dir;
  const fs::path file = dir.write(
      "config",
      config("a",
             "- name: c1\n  cluster: {server: 'https://10.0.0.1:6443', insecure-skip-tls-verify: true}\n",
             user("u1", "t"), context("a", "c1", "u1")));
  auto loaded = cluster::load_kubeconfigs({file}, {});
  REQUIRE(loaded);
  CHECK(loaded->insecure_skip_tls_verify);
  CHECK(loaded->ca_pem.empty());
}

}  // namespace gpuadmit::test
