// The watcher against the real kube-apiserver of the e2e harness (tests/e2e/cluster.sh). Hidden from a plain
// run ([.e2e]); run-e2e.sh starts a control plane, exports its environment and runs "[e2e]". Writes go
// through kubectl, reads through our own transport, so each check is "the API server changed X, and the
// published snapshot shows X within a bound".
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <regex>
#include <thread>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string env(const char* name) {
  const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read before any thread starts
  return value == nullptr ? std::string() : std::string(value);
}

struct Harness {
  std::string kubeconfig = env("KUBECONFIG");
  std::string kubectl = env("GPUADMIT_E2E_KUBECTL");
  std::string state = env("GPUADMIT_E2E_STATE");
  std::string api_port = env("GPUADMIT_E2E_API_PORT");
  std::string cluster_sh = std::string(GPUADMIT_SOURCE_DIR) + "/tests/e2e/cluster.sh";
};

const Harness& harness() {
  static const Harness h = [] {
    Harness out;
    if (out.kubeconfig.empty() || out.kubectl.empty() || out.state.empty()) {
      FAIL("no e2e control plane: run tests/e2e/watch/run.sh (it exports KUBECONFIG, GPUADMIT_E2E_*)");
    }
    return out;
  }();
  return h;
}

struct Command {
  int status = 0;
  std::string output;
};

// Runs a shell command (bounded by `timeout`), capturing stdout and stderr.
Command run(const std::string& command, std::string_view stdin_text = {}) {
  std::string full = "timeout 120 " + command + " 2>&1";
  std::filesystem::path input;
  if (!stdin_text.empty()) {
    input = std::filesystem::temp_directory_path() / ("gpuadmit-it-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(input) << stdin_text;
    full = "timeout 120 " + command + " < " + input.string() + " 2>&1";
  }
  Command result;
  FILE* pipe = ::popen(full.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
    result.output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!input.empty()) std::filesystem::remove(input);
  return result;
}

void kubectl(const std::string& args, std::string_view stdin_text = {}) {
  const Command c = run(harness().kubectl + " " + args, stdin_text);
  INFO("kubectl " << args << "\n" << c.output);
  REQUIRE(c.status == 0);
}

// Bounded polling: the time from now until `predicate` holds, or nullopt after `timeout`.
template <typename Predicate>
std::optional<std::chrono::milliseconds> time_until(Predicate&& predicate,
                                                    std::chrono::milliseconds timeout) {
  const auto start = Clock::now();
  while (!predicate()) {
    if (Clock::now() - start > timeout) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

const k8s::Node* find_node(const policy::ClusterSnapshot& s, const std::string& name) {
  for (const k8s::Node& n : s.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

const k8s::ResourceQuota* find_quota(const policy::ClusterSnapshot& s, const std::string& ns,
                                     const std::string& name) {
  for (const k8s::ResourceQuota& q : s.quotas) {
    if (q.namespace_ == ns && q.name == name) return &q;
  }
  return nullptr;
}

const k8s::ResourceSlice* find_slice(const policy::ClusterSnapshot& s, const std::string& name) {
  for (const k8s::ResourceSlice& slice : s.resource_slices) {
    if (slice.name == name) return &slice;
  }
  return nullptr;
}

std::shared_ptr<cluster::ApiTransport> admin_transport() {
  auto config = cluster::load_kubeconfig(harness().kubeconfig);
  REQUIRE(config.ok());
  auto transport = cluster::make_https_transport(std::move(*config));
  REQUIRE(transport.ok());
  return *transport;
}

cluster::WatcherOptions verbose_options() {
  cluster::WatcherOptions options;
  options.log = cluster::spdlog_sink();
  return options;
}

std::string node_manifest(const std::string& name, int gpus) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\nstatus:\n  allocatable: {cpu: '32', "
         "memory: "
         "256Gi, pods: '110', nvidia.com/gpu: '" +
         std::to_string(gpus) + "'}\n  capacity: {cpu: '32', memory: 256Gi, pods: '110', nvidia.com/gpu: '" +
         std::to_string(gpus) + "'}\n  conditions:\n  - {type: Ready, status: 'True'}\n";
}

// One row of the timing table: what changed, how long until the snapshot showed it.
void report(const std::string& what, std::chrono::milliseconds took) {
  std::cout << "e2e.cluster timing: " << what << ": " << took.count() << " ms\n" << std::flush;
}

}  // namespace

TEST_CASE(
    "node added, tainted, cordoned, resized and deleted, and a quota changed, reach the snapshot within a "
    "second",
    "[.][e2e]") {
  cluster::ClusterWatcher watcher(admin_transport(), verbose_options());
  watcher.start();
  REQUIRE(watcher.wait_for_sync(30s));
  REQUIRE(time_until([&] { return !watcher.view().stale; }, 5s));
  // A kind whose CRD cluster.sh registered moments before (Karpenter's NodePool) may answer the first watch
  // with 410 Gone while the API server's watch cache for it starts ("too old resource version: 293 (294)"):
  // that relist is the API server's start, not the watcher's doing. Following the changes below needs none.
  const auto all_watching = [&] {
    const cluster::ClusterStats s = watcher.stats();
    return std::all_of(s.kinds.begin(), s.kinds.end(),
                       [](const cluster::KindStats& k) { return k.watching; });
  };
  REQUIRE(time_until(all_watching, 5s));
  std::this_thread::sleep_for(1s);
  REQUIRE(time_until(all_watching, 5s));
  const cluster::ClusterStats at_start = watcher.stats();

  struct Step {
    std::string description;
    std::function<void()> change;
    std::function<bool(const policy::ClusterSnapshot&)> visible;
  };
  const std::string node = "it-watch-node";
  const std::vector<Step> steps{
      {"node added", [&] { kubectl("create -f -", node_manifest(node, 4)); },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::Node* n = find_node(s, node);
         return n != nullptr && n->allocatable.contains("nvidia.com/gpu");
       }},
      {"node tainted", [&] { kubectl("taint node " + node + " example.com/dedicated=ml:NoSchedule"); },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::Node* n = find_node(s, node);
         return n != nullptr &&
                std::find(n->taints.begin(), n->taints.end(),
                          k8s::Taint{"example.com/dedicated", "ml", "NoSchedule"}) != n->taints.end();
       }},
      {"node cordoned", [&] { kubectl("cordon " + node); },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::Node* n = find_node(s, node);
         return n != nullptr && n->unschedulable;
       }},
      {"node allocatable changed (status subresource)",
       [&] {
         kubectl("patch node " + node +
                 " --subresource=status --type=merge -p "
                 "'{\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"8\"}}}'");
       },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::Node* n = find_node(s, node);
         return n != nullptr && n->allocatable.at("nvidia.com/gpu") == k8s::Quantity::parse("8").value();
       }},
      {"node deleted", [&] { kubectl("delete node " + node + " --wait=false"); },
       [&](const policy::ClusterSnapshot& s) { return find_node(s, node) == nullptr; }},
      {"quota created",
       [&] {
         kubectl("create namespace it-watch --dry-run=client -o yaml | " + harness().kubectl + " apply -f -");
         kubectl("create quota gpu -n it-watch --hard=requests.nvidia.com/gpu=4");
       },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::ResourceQuota* q = find_quota(s, "it-watch", "gpu");
         return q != nullptr && q->hard.at("requests.nvidia.com/gpu") == k8s::Quantity::parse("4").value();
       }},
      {"quota changed",
       [&] {
         kubectl(
             "patch resourcequota gpu -n it-watch --type=merge -p "
             "'{\"spec\":{\"hard\":{\"requests.nvidia.com/gpu\":\"8\"}}}'");
       },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::ResourceQuota* q = find_quota(s, "it-watch", "gpu");
         return q != nullptr && q->hard.at("requests.nvidia.com/gpu") == k8s::Quantity::parse("8").value();
       }},
      {"storage class and claim created",
       [&] {
         kubectl(
             "apply -f -",
             "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: it-fast\n  annotations: "
             "{storageclass.kubernetes.io/is-default-class: 'true'}\nprovisioner: example.com/fake\n---\n"
             "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n  namespace: "
             "it-watch\nspec:\n"
             "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 100Gi}}\n");
       },
       [&](const policy::ClusterSnapshot& s) {
         return s.storage_class("it-fast") != nullptr && s.claim("it-watch", "ckpt") != nullptr;
       }},
      {"DRA device class, resource slice, claim and claim template created",
       [&] { kubectl("apply -f " + std::string(GPUADMIT_SOURCE_DIR) + "/tests/e2e/watch/dra-objects.yaml"); },
       [&](const policy::ClusterSnapshot& s) {
         const k8s::ResourceSlice* slice = find_slice(s, "it-node-gpu.example.com");
         return s.device_class("it-gpu.example.com") != nullptr && slice != nullptr &&
                slice->devices.size() == 2 && s.resource_claim("it-watch", "it-claim") != nullptr &&
                s.claim_template("it-watch", "it-template") != nullptr;
       }},
      {"DRA resource slice deleted",
       [&] { kubectl("delete resourceslice it-node-gpu.example.com --wait=false"); },
       [&](const policy::ClusterSnapshot& s) { return find_slice(s, "it-node-gpu.example.com") == nullptr; }},
  };
  for (const Step& step : steps) {
    INFO(step.description);
    step.change();
    const auto took = time_until([&] { return step.visible(*watcher.view().snapshot); }, 1s);
    REQUIRE(took.has_value());
    report(step.description, *took);
  }
  const cluster::ClusterStats stats = watcher.stats();
  for (const cluster::Kind kind : cluster::kAllKinds) {
    const cluster::KindStats& k = stats.kinds[cluster::index(kind)];
    INFO(cluster::info(kind).resource);
    CHECK(k.watching);
    CHECK(k.relists == at_start.kinds[cluster::index(kind)].relists);
    CHECK(k.malformed_events == 0);
  }
  CHECK_FALSE(watcher.view().stale);
}

TEST_CASE(
    "an API server restart mid-watch is survived: stale while it is down, current again after, no restart "
    "of the client",
    "[.][e2e]") {
  cluster::WatcherOptions options = verbose_options();
  // The API server stays down for 4 s after it exited (cluster.sh's DOWN_SECONDS), longer than this, so
  // staleness must show. Without the pause the outage can be shorter: on TERM kube-apiserver may hold its
  // watch streams open until it is killed, and then comes back within a second (CI, stop 33).
  options.store.stale_after = 2s;
  cluster::ClusterWatcher watcher(admin_transport(), options);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(30s));
  REQUIRE(time_until([&] { return !watcher.view().stale; }, 5s));
  const cluster::ClusterStats before = watcher.stats();

  const auto restart_started = Clock::now();
  auto restart = std::async(std::launch::async, [] {
    return run("env GPUADMIT_E2E_STATE=" + harness().state + " " + harness().cluster_sh +
               " restart-apiserver 4");
  });
  bool saw_stale = false;
  while (restart.wait_for(10ms) != std::future_status::ready) saw_stale = saw_stale || watcher.view().stale;
  const Command restarted = restart.get();
  INFO(restarted.output);
  REQUIRE(restarted.status == 0);
  const auto restart_done = Clock::now();
  report("API server restart (stop + start + ready)",
         std::chrono::duration_cast<std::chrono::milliseconds>(restart_done - restart_started));
  CHECK(saw_stale);

  // The watches come back by themselves (backoff at most 30 s), and changes flow again.
  const auto recovered = time_until(
      [&] {
        const cluster::ClusterStats s = watcher.stats();
        return std::all_of(s.kinds.begin(), s.kinds.end(),
                           [](const cluster::KindStats& k) { return k.watching; });
      },
      45s);
  REQUIRE(recovered.has_value());
  report("all watches open again after the API server was ready", *recovered);
  CHECK_FALSE(watcher.view().stale);

  const std::string node = "it-after-restart";
  kubectl("create -f -", node_manifest(node, 2));
  const auto took = time_until([&] { return find_node(*watcher.view().snapshot, node) != nullptr; }, 1s);
  REQUIRE(took.has_value());
  report("node added after the restart", *took);
  kubectl("delete node " + node + " --wait=false");

  const cluster::ClusterStats after = watcher.stats();
  std::uint64_t failures = 0;
  std::uint64_t relists = 0;
  for (std::size_t i = 0; i < cluster::kKindCount; ++i) {
    failures += after.kinds[i].failures - before.kinds[i].failures;
    relists += after.kinds[i].relists - before.kinds[i].relists;
    CHECK(after.kinds[i].watch_restarts > before.kinds[i].watch_restarts);
  }
  std::cout << "e2e.cluster restart: " << failures << " failed attempts, " << relists << " relists\n";
  CHECK(failures > 0);
}

TEST_CASE("the documented RBAC is enough: a service account bound to it syncs; without it, LIST is refused",
          "[.][e2e]") {
  // The ClusterRole and binding from docs/cluster.md, applied as written.
  std::ifstream doc(std::string(GPUADMIT_SOURCE_DIR) + "/docs/cluster.md");
  REQUIRE(doc);
  const std::string text((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  const std::smatch block = [&] {
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex("<!-- rbac -->\\s*```yaml\\n([\\s\\S]*?)```")));
    return m;
  }();
  kubectl("create namespace gpuadmit-system --dry-run=client -o yaml | " + harness().kubectl + " apply -f -");
  kubectl("apply -f -", block[1].str());
  kubectl("create serviceaccount gpuadmit-unbound -n gpuadmit-system --dry-run=client -o yaml | " +
          harness().kubectl + " apply -f -");

  const auto token_for = [](const std::string& account) {
    const Command c =
        run(harness().kubectl + " create token " + account + " -n gpuadmit-system --duration=10m");
    INFO(c.output);
    REQUIRE(c.status == 0);
    std::string token = c.output;
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    return token;
  };
  // The in-cluster path, as a pod sees it: service host and port from the environment, token and CA files.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gpuadmit-it-sa";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(harness().state + "/pki/ca.crt", dir / "ca.crt",
                             std::filesystem::copy_options::overwrite_existing);
  const std::map<std::string, std::string> pod_env{{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
                                                   {"KUBERNETES_SERVICE_PORT", harness().api_port}};
  const auto watcher_for = [&](const std::string& account) {
    std::ofstream(dir / "token", std::ios::trunc) << token_for(account) << "\n";
    auto config = cluster::in_cluster_config({dir / "token", dir / "ca.crt"}, &pod_env);
    REQUIRE(config.ok());
    auto transport = cluster::make_https_transport(std::move(*config));
    REQUIRE(transport.ok());
    return std::make_unique<cluster::ClusterWatcher>(*transport, verbose_options());
  };

  SECTION("bound") {
    auto watcher = watcher_for("gpuadmit");
    watcher->start();
    CHECK(watcher->wait_for_sync(30s));
    // A 403 on a DRA kind does not keep the view unsynced (it goes without it), so look: all of them listed.
    const cluster::ClusterStats s = watcher->stats();
    for (const cluster::KindStats& k : s.kinds) {
      CHECK(k.available);
      CHECK(k.failures == 0);
    }
  }
  SECTION("unbound") {
    auto watcher = watcher_for("gpuadmit-unbound");
    watcher->start();
    CHECK_FALSE(watcher->wait_for_sync(3s));
    const cluster::ClusterStats s = watcher->stats();
    for (const cluster::KindStats& k : s.kinds) CHECK(k.failures > 0);
    for (const cluster::Kind kind : cluster::kAllKinds)
      CHECK(s.kinds[cluster::index(kind)].available == !cluster::info(kind).optional);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a dump of the live cluster lists every node and reads back as a snapshot", "[.][e2e]") {
  auto transport = admin_transport();
  auto dump = cluster::dump_cluster(*transport);
  REQUIRE(dump.ok());
  auto snapshot = policy::snapshot_from_list(dump->list);
  REQUIRE(snapshot.ok());
  const Command nodes = run(harness().kubectl + " get nodes -o name");
  REQUIRE(nodes.status == 0);
  const auto expected = static_cast<std::size_t>(std::count(nodes.output.begin(), nodes.output.end(), '\n'));
  CHECK(snapshot->nodes.size() == expected);
  CHECK(dump->counts[cluster::index(cluster::Kind::kNode)] == expected);
}

}  // namespace gpuadmit::test
