// The DRA kinds are optional: an API server before Kubernetes 1.34 does not serve them (404), and a chart
// from before them grants no RBAC on them (403). The view then syncs and stays current without them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/metrics_text.hpp"
#include "gpuadmit/cluster/reflector.hpp"
#include "support/cluster_objects.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

using cluster::Kind;
using namespace std::chrono_literals;

Exchange forbidden() {
  return http_status(
      403,
      R"({"kind":"Status","message":"resourceslices.resource.k8s.io is forbidden: User \"system:serviceaccount:gpuadmit-system:gpuadmit\" cannot list resource \"resourceslices\"","code":403})");
}

// Records what a reflector logs, so a test can wait for "this has been handled" and count lines.
class Lines {
 public:
  cluster::LogSink sink() {
    return [this](spdlog::level::level_enum level, std::string_view msg, const cluster::LogFields& fields) {
      const std::lock_guard lock(mutex_);
      lines_.push_back({level, std::string(msg), fields});
      changed_.notify_all();
    };
  }
  bool wait_for(const std::string& msg, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] {
      return std::any_of(lines_.begin(), lines_.end(), [&](const Line& l) { return l.msg == msg; });
    });
  }
  std::size_t count(const std::string& msg) {
    const std::lock_guard lock(mutex_);
    return std::count_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.msg == msg; });
  }
  cluster::LogFields fields(const std::string& msg) {
    const std::lock_guard lock(mutex_);
    const auto it = std::find_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.msg == msg; });
    return it == lines_.end() ? cluster::LogFields() : it->fields;
  }
  spdlog::level::level_enum level(const std::string& msg) {
    const std::lock_guard lock(mutex_);
    const auto it = std::find_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.msg == msg; });
    return it == lines_.end() ? spdlog::level::off : it->level;
  }

 private:
  struct Line {
    spdlog::level::level_enum level;
    std::string msg;
    cluster::LogFields fields;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Line> lines_;
};

// A reflector for ResourceSlices over a store whose other kinds are listed; `retry`: unavailable_retry.
struct SliceRig {
  explicit SliceRig(std::chrono::seconds retry) {
    for (const Kind kind : cluster::kAllKinds) {
      if (kind != Kind::kResourceSlice) store.replace(kind, {});
    }
    cluster::ReflectorOptions options;
    options.backoff = {1ms, 4ms};
    options.unavailable_retry = retry;
    reflector.emplace(Kind::kResourceSlice, transport, store, options, lines.sink(), 7);
  }
  ~SliceRig() {
    thread.request_stop();
    if (thread.joinable()) thread.join();
  }
  SliceRig(const SliceRig&) = delete;
  SliceRig& operator=(const SliceRig&) = delete;

  void start() {
    thread = std::jthread([this](const std::stop_token& stop) { reflector->run(stop); });
  }
  [[nodiscard]] cluster::KindStats stats() const {
    return store.stats().kinds[cluster::index(Kind::kResourceSlice)];
  }

  FakeTransport transport;
  cluster::SnapshotStore store;
  Lines lines;
  std::optional<cluster::Reflector> reflector;
  std::jthread thread;
};

bool is_slices_list(const std::string& target) {
  return target.find("watch=1") == std::string::npos;
}

}  // namespace

TEST_CASE("a DRA kind answered 404 or 403 is empty and unavailable, the view syncs, and it is logged once",
          "[optional]") {
  struct Case {
    const char* description;
    Exchange answer;
    const char* message;
    spdlog::level::level_enum level;
    std::uint64_t failures;
  };
  const std::vector<Case> cases{
      {"not served (404): a cluster before 1.34, told at info level, not a failure", not_found(),
       "cluster kind not served by the API server; the view goes on without it", spdlog::level::info, 0},
      {"forbidden (403): an RBAC without the DRA kinds, a warning with the grant to add, counted as a "
       "failure",
       forbidden(), "cluster kind forbidden; the view goes on without it", spdlog::level::warn, 1},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      SliceRig rig(1h);
      rig.transport.push(kSlices, c.answer);
      rig.start();
      REQUIRE(rig.lines.wait_for(c.message, 30s));  // logged after the store was told
      CHECK(rig.store.rebuild());
      CHECK(rig.store.synced());
      CHECK_FALSE(rig.store.view().stale);
      CHECK(rig.store.snapshot()->resource_slices.empty());
      CHECK_FALSE(rig.stats().available);
      CHECK(rig.stats().objects == 0);
      CHECK(rig.stats().failures == c.failures);
      CHECK(rig.lines.count(c.message) == 1);
      CHECK(rig.lines.level(c.message) == c.level);
      const cluster::LogFields fields = rig.lines.fields(c.message);
      CHECK(fields["kind"] == "resourceslices");
      CHECK(fields["apiVersion"] == "resource.k8s.io/v1");
      CHECK(fields["retrySeconds"] == 3600);
      if (c.level == spdlog::level::warn) {
        CHECK(fields["hint"] ==
              "grant get/list/watch on resourceslices.resource.k8s.io (see docs/cluster.md)");
      }
      // It waits the hour before it looks again: no second call.
      CHECK_FALSE(rig.transport.wait_for_calls(kSlices, 2, 300ms));
    }
  }
}

TEST_CASE(
    "an unavailable DRA kind is listed again on schedule, logged once however often it is refused, and "
    "available once served",
    "[optional]") {
  SliceRig rig(0s);  // look again at once
  rig.transport.push(kSlices, not_found());
  rig.transport.push(kSlices, not_found());
  rig.transport.push(kSlices, forbidden());  // the cluster upgraded, the RBAC not yet
  rig.transport.push(kSlices, forbidden());
  rig.transport.push(kSlices, list_response("[" + slice_json("node-a", "5") + "]", "10"));
  rig.start();
  // Five LISTs, then the watch from the last one, waiting for a script.
  REQUIRE(rig.transport.wait_for_calls(kSlices, 6));
  const auto targets = rig.transport.targets(kSlices);
  for (std::size_t i = 0; i < 5; ++i) CHECK(is_slices_list(targets[i]));
  CHECK(targets[5].find("resourceVersion=10&") != std::string::npos);
  CHECK(rig.lines.count("cluster kind not served by the API server; the view goes on without it") == 1);
  CHECK(rig.lines.count("cluster kind forbidden; the view goes on without it") == 1);
  CHECK(rig.lines.count("cluster kind still unavailable") == 2);
  CHECK(rig.lines.count("cluster kind available again") == 1);
  CHECK(rig.stats().available);
  CHECK(rig.stats().failures == 2);
  rig.store.rebuild();
  CHECK(rig.store.snapshot()->resource_slices.size() == 1);
}

TEST_CASE("a DRA kind whose watch is refused (404, 403) is listed again, and goes empty if the LIST is too",
          "[optional]") {
  SliceRig rig(1h);
  rig.transport.push(kSlices, list_response("[" + slice_json("node-a", "5") + "]", "10"));
  rig.transport.push(kSlices, forbidden());  // the watch: RBAC revoked meanwhile
  rig.transport.push(kSlices, forbidden());  // the LIST that follows
  rig.start();
  REQUIRE(rig.lines.wait_for("cluster kind forbidden; the view goes on without it", 30s));
  CHECK(rig.lines.count("cluster watch refused; listing again") == 1);
  const auto targets = rig.transport.targets(kSlices);
  REQUIRE(targets.size() == 3);
  CHECK(is_slices_list(targets[2]));
  CHECK_FALSE(rig.stats().available);
  CHECK(rig.stats().objects == 0);  // what it held is gone: no slices the RBAC no longer shows
  rig.store.rebuild();
  CHECK(rig.store.snapshot()->resource_slices.empty());
}

TEST_CASE("a core kind answered 404 or 403 is never unavailable: it is retried and the view waits for it",
          "[optional]") {
  FakeTransport transport;
  cluster::SnapshotStore store;
  for (const Kind kind : cluster::kAllKinds) {
    if (kind != Kind::kNode) store.replace(kind, {});
  }
  cluster::ReflectorOptions options;
  options.backoff = {1ms, 4ms};
  cluster::Reflector reflector(Kind::kNode, transport, store, options, cluster::null_sink(), 3);
  transport.push(kNodes, not_found());
  transport.push(kNodes, http_status(403, R"({"kind":"Status","message":"nodes is forbidden"})"));
  std::jthread thread([&](const std::stop_token& stop) { reflector.run(stop); });
  REQUIRE(transport.wait_for_calls(kNodes, 3));  // 404, 403, then a third LIST waiting for a script
  CHECK(store.stats().kinds[cluster::index(Kind::kNode)].available);
  CHECK(store.stats().kinds[cluster::index(Kind::kNode)].failures == 2);
  CHECK_FALSE(store.dirty());
  CHECK_FALSE(store.rebuild());
  CHECK_FALSE(store.synced());
}

TEST_CASE(
    "the store: an unavailable kind counts as listed, holds nothing, never makes the view stale, and "
    "is available again after a LIST",
    "[optional][store]") {
  FakeClock clock;
  cluster::SnapshotStore store({}, clock);
  for (const Kind kind : cluster::kAllKinds) {
    if (kind != Kind::kResourceSlice) store.replace(kind, {});
    store.set_watching(kind, true);
  }
  CHECK_FALSE(store.dirty());  // slices not listed yet
  store.mark_unavailable(Kind::kResourceSlice);
  REQUIRE(store.rebuild());
  CHECK(store.synced());
  CHECK_FALSE(store.snapshot()->dra_listed);  // dra-claims must not call a claim it cannot see missing
  store.set_watching(Kind::kResourceSlice, false);
  clock.advance(1h);
  CHECK_FALSE(store.view().stale);
  CHECK_FALSE(store.stats().stale);
  store.mark_unavailable(Kind::kResourceSlice);  // again: nothing changes, nothing to rebuild
  CHECK_FALSE(store.dirty());

  store.replace(
      Kind::kResourceSlice,
      {{"node-a-gpu.nvidia.com",
        cluster::parse_object(Kind::kResourceSlice, nlohmann::json::parse(slice_json("node-a", "1")))
            .value()}});
  CHECK(store.stats().kinds[cluster::index(Kind::kResourceSlice)].available);
  REQUIRE(store.rebuild());
  CHECK(store.snapshot()->resource_slices.size() == 1);
  CHECK(store.snapshot()->dra_listed);
  clock.advance(1h);  // available and without a watch: it counts again
  CHECK(store.view().stale);

  store.mark_unavailable(Kind::kResourceSlice);
  CHECK(store.stats().kinds[cluster::index(Kind::kResourceSlice)].objects == 0);
  REQUIRE(store.rebuild());
  CHECK(store.snapshot()->resource_slices.empty());
  CHECK_FALSE(store.view().stale);
}

TEST_CASE("the metrics say which kinds are available, and count the DRA kinds' objects",
          "[optional][store]") {
  cluster::ClusterStats stats;
  stats.kinds[cluster::index(Kind::kResourceSlice)].objects = 5000;
  stats.kinds[cluster::index(Kind::kResourceClaimTemplate)].available = false;
  const std::string text = cluster::prometheus_text(stats);
  for (const char* line : {"gpuadmit_cluster_objects{kind=\"resourceslices\"} 5000\n",
                           "gpuadmit_cluster_available{kind=\"resourceclaimtemplates\"} 0\n",
                           "gpuadmit_cluster_available{kind=\"nodes\"} 1\n",
                           "gpuadmit_cluster_watch_restarts_total{kind=\"deviceclasses\"} 0\n",
                           "gpuadmit_cluster_failures_total{kind=\"resourceclaims\"} 0\n",
                           "# TYPE gpuadmit_cluster_available gauge\n"}) {
    CHECK_THAT(text, Catch::Contains(line));
  }
}

TEST_CASE("ResourceSlices are listed 100 a page however large the page asked for, the other kinds as asked",
          "[optional]") {
  FakeTransport transport;
  transport.push(kSlices, list_response("[]", "1"));
  transport.push(kNodes, list_response("[]", "1"));
  CHECK(cluster::list_all(transport, Kind::kResourceSlice, 500, {}).ok());
  CHECK(cluster::list_all(transport, Kind::kNode, 500, {}).ok());
  CHECK(transport.targets(kSlices) == std::vector<std::string>{kSlices + "?limit=100"});
  CHECK(transport.targets(kNodes) == std::vector<std::string>{kNodes + "?limit=500"});
  transport.push(kSlices, list_response("[]", "1"));
  CHECK(cluster::list_all(transport, Kind::kResourceSlice, 20, {}).ok());
  CHECK(transport.targets(kSlices).back() == kSlices + "?limit=20");
}

}  // namespace gpuadmit::test
