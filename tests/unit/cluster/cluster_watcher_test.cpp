#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "support/cluster_objects.hpp"
#include "support/eventually.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;

// The optional kinds (DRA, NodePools) listed empty, with watches that stay open.
void serve_empty_dra_kinds(FakeTransport& transport) {
  for (const std::string& path : kOptionalPaths) {
    transport.push(path, list_response("[]", "10"));
    transport.push(path, watch_stream({}, true));
  }
}

}  // namespace

TEST_CASE("the watcher syncs every kind, then follows watch events into the published snapshot",
          "[watcher]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kNodes, list_response("[" + node_json("a", "5") + "]", "10"));
  transport->push(kQuotas, list_response("[" + quota_json("ml", "gpu", "6", "8") + "]", "10"));
  transport->push(kClasses, list_response("[]", "10"));
  transport->push(kClaims, list_response("[]", "10"));
  for (const std::string& path : {kQuotas, kClasses, kClaims}) transport->push(path, watch_stream({}, true));
  serve_empty_dra_kinds(*transport);

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
  for (const std::string& path : kAllPaths) transport->push(path, list_response("[]", "10"));
  for (const std::string& path : kAllPaths) {
    if (path != kNodes) transport->push(path, watch_stream({}, true));
  }
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
  for (const std::string& path : kAllPaths) {
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
  for (const std::string& path : kAllPaths) {
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

TEST_CASE("the DRA objects and NodePools of LISTs and watch events reach the published snapshot",
          "[watcher][dra]") {
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims}) {
    transport->push(path, list_response("[]", "10"));
    transport->push(path, watch_stream({}, true));
  }
  transport->push(kDeviceClasses, list_response("[" + device_class_json("gpu.nvidia.com", "5") + "]", "10"));
  transport->push(kSlices, list_response("[" + slice_json("node-a", "6") + "]", "10"));
  transport->push(kResourceClaims, list_response("[" + resource_claim_json("ml", "shared", "7") + "]", "10"));
  transport->push(kClaimTemplates,
                  list_response("[" + claim_template_json("ml", "one-gpu", "8") + "]", "10"));
  transport->push(kNodePools, list_response("[" + node_pool_json("gpu", "9") + "]", "10"));
  for (const std::string& path : {kDeviceClasses, kResourceClaims, kClaimTemplates, kNodePools})
    transport->push(path, watch_stream({}, true));
  cluster::ClusterWatcher watcher(transport, fast_watcher_options());
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] { return watcher.view().snapshot->resource_slices.size() == 1; }));
  const auto first = watcher.view().snapshot;
  CHECK(first->node_pools.size() == 1);
  CHECK(first->device_classes.size() == 1);
  CHECK(first->resource_claims.size() == 1);
  CHECK(first->claim_templates.size() == 1);
  CHECK(first->resource_slices[0].devices.size() == 8);

  transport->push(kSlices, watch_stream({event("ADDED", slice_json("node-b", "11", 4, "Tesla T4")),
                                         event("DELETED", slice_json("node-a", "12"))},
                                        true));
  REQUIRE(eventually([&] {
    const auto now = watcher.view().snapshot;
    return now->resource_slices.size() == 1 && now->resource_slices[0].node_name == "node-b";
  }));
  CHECK(watcher.stats().kinds[cluster::index(cluster::Kind::kResourceSlice)].objects == 1);
  watcher.stop();
}

TEST_CASE("a cluster that does not serve or grant the optional kinds syncs without them and stays current",
          "[watcher][dra]") {
  const auto [status, description] =
      GENERATE(table<int, const char*>({{404, "not served: Kubernetes before 1.34"},
                                        {403, "forbidden: the RBAC of a chart from before the DRA kinds"}}));
  INFO(description);
  std::mutex mutex;
  std::vector<std::pair<std::string, cluster::LogFields>> lines;
  cluster::WatcherOptions options = fast_watcher_options();
  options.probe_interval = 0ms;  // the open watches alone keep the four kinds current
  options.reflector.unavailable_retry = 1h;
  options.log = [&](spdlog::level::level_enum, std::string_view msg, const cluster::LogFields& fields) {
    const std::lock_guard lock(mutex);
    lines.emplace_back(msg, fields);
  };
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : {kNodes, kQuotas, kClasses, kClaims}) {
    transport->push(path, list_response("[]", "10"));
    transport->push(path, watch_stream({}, true));
  }
  for (const std::string& path : kOptionalPaths) {
    transport->push(
        path, status == 404 ? not_found() : http_status(403, R"({"kind":"Status","message":"forbidden"})"));
  }
  FakeClock clock;
  cluster::ClusterWatcher watcher(transport, options, clock);
  watcher.start();
  REQUIRE(watcher.wait_for_sync(5s));
  REQUIRE(eventually([&] {
    const cluster::ClusterStats s = watcher.stats();
    return std::all_of(s.kinds.begin(), s.kinds.begin() + 4,
                       [](const cluster::KindStats& k) { return k.watching; });
  }));
  clock.advance(1h);  // the DRA kinds were last heard of an hour ago, and have no watch: not stale for that
  CHECK_FALSE(watcher.view().stale);
  const cluster::ClusterStats stats = watcher.stats();
  for (const cluster::Kind kind : cluster::kAllKinds) {
    INFO(cluster::info(kind).resource);
    CHECK(stats.kinds[cluster::index(kind)].available == !cluster::info(kind).optional);
    CHECK(stats.kinds[cluster::index(kind)].failures ==
          (cluster::info(kind).optional && status == 403 ? 1 : 0));
  }
  watcher.stop();
  const std::lock_guard lock(mutex);
  const auto synced = std::find_if(lines.begin(), lines.end(),
                                   [](const auto& l) { return l.first == "cluster view synced"; });
  REQUIRE(synced != lines.end());
  CHECK(synced->second["unavailable"] ==
        "deviceclasses,resourceslices,resourceclaims,resourceclaimtemplates,nodepools");
}

TEST_CASE("the watcher hands every snapshot it publishes to on_rebuilt", "[watcher]") {
  std::atomic<std::size_t> largest{0};
  cluster::WatcherOptions options = fast_watcher_options();
  options.on_rebuilt = [&](const policy::ClusterSnapshot& snapshot) { largest = snapshot.nodes.size(); };
  auto transport = std::make_shared<FakeTransport>();
  for (const std::string& path : kAllPaths) {
    transport->push(path, list_response(path == kNodes ? "[" + node_json("a", "5") + "]" : "[]", "10"));
    if (path != kNodes) transport->push(path, watch_stream({}, true));
  }
  cluster::ClusterWatcher watcher(transport, options);
  watcher.start();
  REQUIRE(eventually([&] { return largest.load() == 1; }));
  transport->push(kNodes, watch_stream({event("ADDED", node_json("b", "11"))}, true));
  REQUIRE(eventually([&] { return largest.load() == 2; }));
  watcher.stop();
}

}  // namespace gpuadmit::test
