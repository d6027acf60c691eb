#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "support/cluster_objects.hpp"
#include "support/eventually.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;

}  // namespace

TEST_CASE("the watcher syncs all four kinds, then follows watch events into the published snapshot",
          "[watcher]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kNodes, list_response("[" + node_json("a", "5") + "]", "10"));
  transport->push(kQuotas, list_response("[" + quota_json("ml", "gpu", "6", "8") + "]", "10"));
  transport->push(kClasses, list_response("[]", "10"));
  transport->push(kClaims, list_response("[]", "10"));
  for (const std::string& path : {kQuotas, kClasses, kClaims}) transport->push(path, watch_stream({}, true));

  cluster::ClusterWatcher watcher(transport, fast_watcher_options());
  CHECK_FALSE(watcher.synced());
  CHECK(watcher.view().stale);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] { return watcher.view().snapshot->nodes.size() == 1; }));
  CHECK(watcher.view().snapshot->quotas.size() == 1);

  transport->push(kNodes, watch_stream({event("ADDED", node_json("b", "11"))}, true));
  REQUIRE(eventually([&] { return watcher.view().snapshot->nodes.size() == 2; }));
  CHECK_FALSE(watcher.view().stale);
  const cluster::ClusterStats stats = watcher.stats();
  CHECK(stats.synced);
  CHECK(stats.kinds[cluster::index(cluster::Kind::kNode)].objects == 2);
  CHECK(stats.kinds[cluster::index(cluster::Kind::kResourceQuota)].objects == 1);
  CHECK(stats.snapshot_rebuilds >= 1);

  const auto before = std::chrono::steady_clock::now();
  watcher.stop();
  CHECK(std::chrono::steady_clock::now() - before < 2s);
  CHECK(watcher.view().snapshot->nodes.size() == 2);  // the last snapshot outlives the threads
  watcher.stop();                                     // idempotent
}

TEST_CASE("a watcher destroyed while its API server never answers stops promptly", "[watcher]") {
  auto transport = std::make_shared<FakeTransport>();  // nothing scripted: every call blocks
  const auto before = std::chrono::steady_clock::now();
  {
    cluster::ClusterWatcher watcher(transport, fast_watcher_options());
    watcher.start();
    CHECK_FALSE(watcher.wait_for_sync(50ms));
  }
  CHECK(std::chrono::steady_clock::now() - before < 2s);
}

TEST_CASE("the watcher logs when the view turns stale and when it is current again, once each", "[watcher]") {
  std::mutex mutex;
  std::vector<std::string> messages;
  cluster::WatcherOptions options = fast_watcher_options();
  options.store.stale_after = 50ms;
  options.stale_check_interval = 5ms;
  options.log = [&](spdlog::level::level_enum, std::string_view msg, const cluster::LogFields&) {
    const std::lock_guard lock(mutex);
    messages.emplace_back(msg);
  };
  const auto logged = [&](const std::string& msg) {
    const std::lock_guard lock(mutex);
    return std::count(messages.begin(), messages.end(), msg);
  };
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims})
    transport->push(path, list_response("[]", "10"));
  for (const std::string& path : {kQuotas, kClasses, kClaims}) transport->push(path, watch_stream({}, true));
  // The node watch fails, and the next one is not answered: no working watch for nodes.
  transport->push(kNodes, failure("connection refused"));

  cluster::ClusterWatcher watcher(transport, options);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] { return logged("cluster view stale: serving from the last snapshot") == 1; }));
  CHECK(watcher.view().stale);

  transport->push(kNodes, watch_stream({}, true));  // the API server answers again
  REQUIRE(eventually([&] { return logged("cluster view current again") == 1; }));
  CHECK_FALSE(watcher.view().stale);
  watcher.stop();
  CHECK(logged("cluster view stale: serving from the last snapshot") == 1);
}

TEST_CASE("open but silent watches do not keep the view current once the API server stops answering probes",
          "[watcher]") {
  cluster::WatcherOptions options = fast_watcher_options();
  options.store.stale_after = 50ms;
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims}) {
    transport->push(path, list_response("[]", "10"));
    transport->push(path, watch_stream({}, true));  // open and silent, as behind a partition
  }
  cluster::ClusterWatcher watcher(transport, options);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] { return !watcher.view().stale && transport->probes() >= 2; }));

  SECTION("unanswered: the probe blocks, as a connection into a partition does") {
    transport->answer_probes(std::nullopt);
  }
  SECTION("refused: the probe fails at once") {
    transport->answer_probes(failure("connection refused"));
  }
  REQUIRE(eventually([&] { return watcher.view().stale; }));
  const cluster::ClusterStats stats = watcher.stats();
  CHECK(std::all_of(stats.kinds.begin(), stats.kinds.end(),
                    [](const cluster::KindStats& k) { return k.watching; }));
  CHECK(stats.seconds_since_probe_answer >= 0.05);

  transport->answer_probes(Exchange{std::nullopt, 403, R"({"kind":"Status","code":403})", {}, false});
  REQUIRE(eventually([&] { return !watcher.view().stale; }));  // any HTTP answer: reachable and serving
  watcher.stop();
}

TEST_CASE("a watcher with probes off keeps open watches current however long the API server is silent",
          "[watcher]") {
  cluster::WatcherOptions options = fast_watcher_options();
  options.probe_interval = 0ms;
  auto transport = std::make_shared<FakeTransport>();
  transport->answer_probes(std::nullopt);
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims}) {
    transport->push(path, list_response("[]", "10"));
    transport->push(path, watch_stream({}, true));
  }
  FakeClock clock;
  cluster::ClusterWatcher watcher(transport, options, clock);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] {
    const cluster::ClusterStats s = watcher.stats();
    return std::all_of(s.kinds.begin(), s.kinds.end(),
                       [](const cluster::KindStats& k) { return k.watching; });
  }));
  clock.advance(1h);
  CHECK_FALSE(watcher.view().stale);
  CHECK(transport->probes() == 0);
  watcher.stop();
}

TEST_CASE("a dump is a v1 List of the four kinds with kind and apiVersion set, readable as a snapshot",
          "[dump]") {
  FakeTransport transport;
  transport.push(
      kNodes,
      list_response(
          R"([{"metadata":{"name":"n1","managedFields":[{"manager":"kubelet"}]},"status":{"allocatable":{"nvidia.com/gpu":"4"}}}])",
          "10"));
  transport.push(kQuotas, list_response("[" + quota_json("ml", "gpu", "6", "8") + "]", "10"));
  transport.push(kClasses,
                 list_response(R"([{"metadata":{"name":"fast"},"provisioner":"csi.example.com"}])", "10"));
  transport.push(
      kClaims,
      list_response(
          R"([{"metadata":{"name":"ckpt","namespace":"ml"},"spec":{"resources":{"requests":{"storage":"100Gi"}}}}])",
          "10"));
  auto dump = cluster::dump_cluster(transport);
  REQUIRE(dump.ok());
  const nlohmann::json& list = dump->list;
  CHECK(list["apiVersion"] == "v1");
  CHECK(list["kind"] == "List");
  REQUIRE(list["items"].size() == 4);
  CHECK(list["items"][0]["kind"] == "Node");
  CHECK(list["items"][0]["apiVersion"] == "v1");
  CHECK_FALSE(list["items"][0]["metadata"].contains("managedFields"));
  CHECK(list["items"][2]["apiVersion"] == "storage.k8s.io/v1");
  CHECK(list["items"][3]["kind"] == "PersistentVolumeClaim");
  CHECK(dump->counts == std::array<std::size_t, 4>{1, 1, 1, 1});

  auto snapshot = policy::snapshot_from_list(list);
  REQUIRE(snapshot.ok());
  CHECK(snapshot->nodes.size() == 1);
  CHECK(snapshot->quotas.size() == 1);
  CHECK(snapshot->storage_classes.size() == 1);
  CHECK(snapshot->claims.size() == 1);
}

TEST_CASE("a dump fails with the first kind that cannot be listed", "[dump]") {
  FakeTransport transport;
  transport.push(kNodes, list_response("[]", "1"));
  transport.push(kQuotas,
                 http_status(403, R"({"kind":"Status","message":"resourcequotas is forbidden","code":403})"));
  auto dump = cluster::dump_cluster(transport);
  REQUIRE_FALSE(dump.ok());
  CHECK(dump.error().message == "LIST resourcequotas: HTTP 403: resourcequotas is forbidden");
}

}  // namespace gpuadmit::test
