#include <catch2/catch.hpp>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "gpuadmit/cluster/reflector.hpp"
#include "support/cluster_objects.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

using cluster::Kind;
using namespace std::chrono_literals;

cluster::ReflectorOptions fast_options() {
  cluster::ReflectorOptions options;
  options.backoff = {1ms, 4ms};
  options.min_watch_timeout = 300s;
  return options;
}

// A store whose other three kinds are already listed (empty), so listing nodes completes the sync.
struct Rig {
  Rig() {
    for (const Kind kind : cluster::kAllKinds) {
      if (kind != Kind::kNode) store.replace(kind, {});
    }
  }
  ~Rig() {
    thread.request_stop();
    if (thread.joinable()) thread.join();
  }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  void start() {
    thread = std::jthread([this](const std::stop_token& stop) { reflector.run(stop); });
  }
  // Blocks until the reflector waits for an exchange that was not scripted, then rebuilds the snapshot.
  std::shared_ptr<const policy::ClusterSnapshot> settle() {
    REQUIRE(transport.wait_idle(kNodes));
    store.rebuild();
    return store.snapshot();
  }
  std::vector<std::string> node_names() {
    std::vector<std::string> names;
    for (const k8s::Node& n : settle()->nodes) names.push_back(n.name);
    return names;
  }
  [[nodiscard]] const cluster::KindStats node_stats() const { return store.stats().kinds[0]; }

  FakeTransport transport;
  cluster::SnapshotStore store;
  cluster::Reflector reflector{Kind::kNode, transport, store, fast_options(), cluster::null_sink(), 42};
  std::jthread thread;
};

bool is_list(const std::string& target) {
  return target.find("watch=1") == std::string::npos;
}

// Records the messages a reflector logs, so a test can wait for "this has been handled".
class LogRecorder {
 public:
  cluster::LogSink sink() {
    return [this](spdlog::level::level_enum, std::string_view msg, const cluster::LogFields&) {
      const std::lock_guard lock(mutex_);
      messages_.emplace_back(msg);
      changed_.notify_all();
    };
  }
  bool wait_for(const std::string& msg, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(
        lock, timeout, [&] { return std::find(messages_.begin(), messages_.end(), msg) != messages_.end(); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> messages_;
};

cluster::ReflectorOptions fast_options_for_gone() {
  cluster::ReflectorOptions options = fast_options();
  options.backoff = {1h, 1h};
  return options;
}

}  // namespace

TEST_CASE("a LIST then watch events add, modify and delete nodes in the snapshot", "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes,
                     list_response("[" + node_json("a", "5") + "," + node_json("b", "6") + "]", "10"));
  rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("c", "11")),
                                           event("MODIFIED", node_json("a", "12", "8")),
                                           event("DELETED", node_json("b", "13"))}));
  rig.start();
  const auto snapshot = rig.settle();
  REQUIRE(snapshot->nodes.size() == 2);
  CHECK(snapshot->nodes[0].name == "a");
  CHECK(snapshot->nodes[0].allocatable.at("nvidia.com/gpu") == k8s::Quantity::parse("8").value());
  CHECK(snapshot->nodes[1].name == "c");
  CHECK(rig.reflector.resource_version() == "13");
  CHECK(rig.store.synced());
  CHECK(rig.node_stats().objects == 2);
}

TEST_CASE("a watch starts from the LIST's resourceVersion and asks for bookmarks and a timeout",
          "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response("[]", "77"));
  rig.start();
  REQUIRE(rig.transport.wait_idle(kNodes));
  const auto targets = rig.transport.targets(kNodes);
  REQUIRE(targets.size() == 2);
  CHECK(targets[0] == "/api/v1/nodes?limit=500");
  CHECK(targets[1].find("watch=1") != std::string::npos);
  CHECK(targets[1].find("allowWatchBookmarks=true") != std::string::npos);
  CHECK(targets[1].find("resourceVersion=77") != std::string::npos);
  const auto at = targets[1].find("timeoutSeconds=");
  REQUIRE(at != std::string::npos);
  const int timeout = std::stoi(targets[1].substr(at + 15));
  CHECK(timeout >= 300);
  CHECK(timeout < 600);
  // The transport deadline leaves the server room to end the watch itself.
  CHECK(rig.transport.watch_deadlines().at(0) == std::chrono::seconds(timeout) + 30s);
}

TEST_CASE("a bookmark moves the resourceVersion the next watch starts from", "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response("[]", "10"));
  rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("a", "11")), bookmark("20")}));
  rig.start();
  REQUIRE(rig.transport.wait_idle(kNodes));
  const auto targets = rig.transport.targets(kNodes);
  REQUIRE(targets.size() == 3);
  CHECK_FALSE(is_list(targets[2]));
  CHECK(targets[2].find("resourceVersion=20&") != std::string::npos);
  CHECK(rig.node_stats().relists == 0);
}

TEST_CASE("410 Gone, as an ERROR event or as the HTTP status, makes the reflector LIST again",
          "[reflector]") {
  struct Case {
    const char* description;
    Exchange gone;
  };
  const std::vector<Case> cases{
      {"an ERROR event with code 410 in the stream",
       watch_stream({error_event(410, "too old resource version")})},
      {"the watch answered with HTTP 410", http_status(410, R"({"kind":"Status","code":410})")},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      Rig rig;
      rig.transport.push(kNodes, list_response("[" + node_json("a", "5") + "]", "10"));
      rig.transport.push(kNodes, c.gone);
      rig.transport.push(kNodes, list_response("[" + node_json("b", "30") + "]", "30"));
      rig.start();
      CHECK(rig.node_names() == std::vector<std::string>{"b"});
      const auto targets = rig.transport.targets(kNodes);
      REQUIRE(targets.size() == 4);
      CHECK(is_list(targets[2]));
      CHECK(targets[3].find("resourceVersion=30&") != std::string::npos);
      CHECK(rig.node_stats().relists == 1);
    }
  }
}

TEST_CASE("a relist keeps the cached object of every node whose view did not change", "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes,
                     list_response("[" + node_json("a", "5") + "," + node_json("b", "6") + "]", "10"));
  rig.start();
  const auto before = rig.settle();
  REQUIRE(before->nodes.size() == 2);
  rig.transport.push(kNodes, watch_stream({error_event(410, "too old resource version")}));
  // "a" comes back with another resourceVersion only; "b" has 8 GPUs now.
  rig.transport.push(kNodes,
                     list_response("[" + node_json("a", "25") + "," + node_json("b", "26", "8") + "]", "30"));
  REQUIRE(rig.transport.wait_for_calls(kNodes, 4));  // LIST, the watch that said 410, LIST, a watch
  rig.store.rebuild();
  const auto after = rig.store.snapshot();
  REQUIRE(rig.node_stats().relists == 1);
  REQUIRE(after->nodes.size() == 2);
  CHECK(&after->nodes[0] == &before->nodes[0]);  // one copy of "a", however many relists
  CHECK(&after->nodes[1] != &before->nodes[1]);
  CHECK(after->nodes[1].allocatable.at("nvidia.com/gpu") == k8s::Quantity::parse("8").value());
}

TEST_CASE("a malformed watch line is counted and followed by a relist, never a crash", "[reflector]") {
  const std::vector<std::pair<const char*, std::string>> cases{
      {"a line that is not JSON", "this is not json"},
      {"a truncated event", R"({"type":"ADDED","object":{"metadata":{"name":)"},
      {"a JSON array", "[1,2,3]"},
      {"an event without a type", R"({"object":{"metadata":{"name":"x"}}})"},
      {"an event whose object is a string", R"({"type":"ADDED","object":"x"})"},
      {"an unknown event type", event("RENAMED", node_json("x", "11"))},
      {"an object without a name", event("ADDED", R"({"metadata":{"resourceVersion":"11"}})")},
      {"a bookmark without a resourceVersion", event("BOOKMARK", R"({"metadata":{}})")},
      {"an array nested deeper than the JSON limit", std::string(200, '[') + std::string(200, ']')},
  };
  for (const auto& [description, line] : cases) {
    DYNAMIC_SECTION(description) {
      Rig rig;
      rig.transport.push(kNodes, list_response("[" + node_json("a", "5") + "]", "10"));
      rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("b", "11")), line,
                                               event("ADDED", node_json("never-applied", "12"))}));
      rig.transport.push(kNodes,
                         list_response("[" + node_json("a", "5") + "," + node_json("b", "11") + "]", "12"));
      rig.start();
      CHECK(rig.node_names() == std::vector<std::string>{"a", "b"});
      CHECK(rig.node_stats().malformed_events == 1);
      CHECK(rig.node_stats().relists == 1);
      CHECK(is_list(rig.transport.targets(kNodes).at(2)));
    }
  }
}

TEST_CASE("an object that does not parse is dropped from the cache and counted, without a relist",
          "[reflector]") {
  Rig rig;
  const std::string bad_quantity =
      R"({"metadata":{"name":"a","resourceVersion":"11"},"status":{"allocatable":{"cpu":"lots"}}})";
  rig.transport.push(kNodes,
                     list_response("[" + node_json("a", "5") + "," + node_json("b", "6") + "]", "10"));
  rig.transport.push(kNodes,
                     watch_stream({event("MODIFIED", bad_quantity), event("ADDED", node_json("c", "12"))}));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"b", "c"});
  CHECK(rig.node_stats().malformed_events == 1);
  CHECK(rig.node_stats().relists == 0);
  CHECK(rig.reflector.resource_version() == "12");
}

TEST_CASE("a LIST item that does not parse is skipped, and the kind still counts as synced", "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response(R"([{"metadata":{"name":"odd"},"spec":{"unschedulable":"yes"}},)" +
                                               node_json("a", "5") + "]",
                                           "10"));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"a"});
  CHECK(rig.store.synced());
  CHECK(rig.node_stats().malformed_events == 1);
}

TEST_CASE("an object nested deeper than the JSON limit is kept without its deep part, never failing its kind",
          "[reflector]") {
  // A tenant's ResourceClaim may nest its opaque parameters thousands deep, legally: the page, the event and
  // the kind must survive it. Here a node with a deep field no rule reads stands for it.
  const std::string deep = std::string(300, '[') + std::string(300, ']');
  const auto deep_node = [&](const std::string& name, const std::string& rv) {
    return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv + R"("},"spec":{"x":)" + deep +
           R"(},"status":{"allocatable":{"nvidia.com/gpu":"8"}}})";
  };
  Rig rig;
  rig.transport.push(kNodes,
                     list_response("[" + deep_node("listed", "5") + "," + node_json("a", "6") + "]", "10"));
  rig.transport.push(kNodes, watch_stream({event("ADDED", deep_node("watched", "11"))}));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"a", "listed", "watched"});
  CHECK(rig.store.synced());
  CHECK(rig.node_stats().malformed_events == 2);  // counted, and logged with the kind and the object's key
  CHECK(rig.node_stats().relists == 0);
  CHECK(rig.reflector.resource_version() == "11");
}

TEST_CASE("failures are retried after a backoff: a watch from the same resourceVersion, a LIST again",
          "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, failure("connect: connection refused"));
  rig.transport.push(kNodes,
                     http_status(403, R"({"kind":"Status","message":"nodes is forbidden","code":403})"));
  rig.transport.push(kNodes, list_response("[" + node_json("a", "5") + "]", "10"));
  rig.transport.push(kNodes, failure("TLS handshake: connection reset"));
  rig.transport.push(kNodes, http_status(500, "internal error"));
  rig.transport.push(kNodes, watch_stream({error_event(500, "etcd is sad")}));
  rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("b", "11"))}));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"a", "b"});
  const auto targets = rig.transport.targets(kNodes);
  REQUIRE(targets.size() == 8);
  for (std::size_t i : {0U, 1U, 2U}) CHECK(is_list(targets[i]));
  for (std::size_t i : {3U, 4U, 5U, 6U}) {
    CHECK_FALSE(is_list(targets[i]));
    CHECK(targets[i].find("resourceVersion=10&") != std::string::npos);
  }
  CHECK(targets[7].find("resourceVersion=11&") != std::string::npos);
  CHECK(rig.node_stats().failures == 5);
  CHECK(rig.node_stats().relists == 0);
  CHECK(rig.node_stats().watch_restarts == 4);
}

TEST_CASE("a watch that ends on schedule is reopened without a LIST", "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response("[]", "10"));
  rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("a", "11"))}));
  rig.transport.push(kNodes, watch_stream({event("ADDED", node_json("b", "12"))}));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"a", "b"});
  const auto targets = rig.transport.targets(kNodes);
  REQUIRE(targets.size() == 4);
  CHECK(is_list(targets[0]));
  CHECK_FALSE(is_list(targets[3]));
  CHECK(rig.node_stats().failures == 0);
}

TEST_CASE("a paginated LIST follows continue tokens and watches from the last page's version",
          "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response("[" + node_json("a", "5") + "]", "10", "tok+en/=="));
  rig.transport.push(kNodes, list_response("[" + node_json("b", "6") + "]", "10"));
  rig.start();
  CHECK(rig.node_names() == std::vector<std::string>{"a", "b"});
  const auto targets = rig.transport.targets(kNodes);
  REQUIRE(targets.size() == 3);
  CHECK(targets[1] == "/api/v1/nodes?limit=500&continue=tok%2Ben%2F%3D%3D");
  CHECK(targets[2].find("resourceVersion=10&") != std::string::npos);
}

TEST_CASE("stopping the reflector ends an open watch at once and marks the kind as not watching",
          "[reflector]") {
  Rig rig;
  rig.transport.push(kNodes, list_response("[]", "10"));
  rig.transport.push(kNodes, watch_stream({}, /*hold_open=*/true));
  rig.start();
  REQUIRE(rig.transport.wait_idle(kNodes));
  CHECK(rig.node_stats().watching);
  const auto before = std::chrono::steady_clock::now();
  rig.thread.request_stop();
  rig.thread.join();
  CHECK(std::chrono::steady_clock::now() - before < 2s);
  CHECK_FALSE(rig.node_stats().watching);
}

TEST_CASE("list_all reports the HTTP status and the API server's message", "[reflector]") {
  FakeTransport transport;
  transport.push(
      kNodes,
      http_status(403,
                  R"({"kind":"Status","message":"nodes is forbidden: User \"x\" cannot list","code":403})"));
  int status = 0;
  auto listed = cluster::list_all(transport, Kind::kNode, 500, {}, &status);
  REQUIRE_FALSE(listed);
  CHECK(status == 403);
  CHECK(listed.error().message == "LIST nodes: HTTP 403: nodes is forbidden: User \"x\" cannot list");
}

}  // namespace gpuadmit::test

namespace gpuadmit::test {

TEST_CASE("410 Gone relists at once after a working watch, but backs off when it follows the LIST directly",
          "[reflector]") {
  // The backoff is an hour, so "at once" needs no timing assert: with it, the only way to reach the next
  // LIST within the (generous) wait is not to back off at all, however loaded the machine is.
  cluster::ReflectorOptions slow = fast_options_for_gone();
  SECTION("a watch delivered events, then the next one is gone: LIST at once despite an hour's backoff") {
    FakeTransport transport;
    cluster::SnapshotStore store;
    cluster::Reflector reflector(cluster::Kind::kNode, transport, store, slow, cluster::null_sink(), 1);
    transport.push(kNodes, list_response("[]", "10"));
    transport.push(kNodes, watch_stream({event("ADDED", node_json("a", "11"))}));
    transport.push(kNodes, watch_stream({error_event(410, "too old resource version")}));
    transport.push(kNodes, list_response("[]", "20"));
    std::jthread thread([&](const std::stop_token& stop) { reflector.run(stop); });
    // LIST, watch (event), watch (410), LIST, then a watch from 20 that waits for a script: 5 calls.
    REQUIRE(transport.wait_for_calls(kNodes, 5));
    const auto targets = transport.targets(kNodes);
    REQUIRE(targets.size() == 5);
    CHECK(is_list(targets[3]));
    CHECK_FALSE(is_list(targets[4]));
    CHECK(targets[4].find("resourceVersion=20") != std::string::npos);
  }
  SECTION("gone on the first watch after the LIST: wait for the backoff before listing again") {
    FakeTransport transport;
    cluster::SnapshotStore store;
    LogRecorder log;
    cluster::Reflector reflector(cluster::Kind::kNode, transport, store, slow, log.sink(), 1);
    transport.push(kNodes, list_response("[]", "10"));
    transport.push(kNodes, watch_stream({error_event(410, "too old resource version")}));
    std::jthread thread([&](const std::stop_token& stop) { reflector.run(stop); });
    // The 410 has been handled (it is logged before the backoff) ...
    REQUIRE(log.wait_for("cluster watch expired (410 Gone); relisting", 30s));
    // ... and then it sleeps in the backoff: no third call. A loaded machine can only delay a wrong early
    // LIST, never make this check fail spuriously.
    CHECK_FALSE(transport.wait_for_calls(kNodes, 3, 300ms));
    CHECK(transport.targets(kNodes).size() == 2);
  }
}

}  // namespace gpuadmit::test
