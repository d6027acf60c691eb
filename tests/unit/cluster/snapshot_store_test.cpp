#include <catch2/catch.hpp>

#include <functional>

#include <nlohmann/json.hpp>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "support/cluster_objects.hpp"

namespace gpuadmit::test {
namespace {

using cluster::Kind;
using namespace std::chrono_literals;

cluster::ClusterObject node(const std::string& name) {
  return cluster::parse_object(Kind::kNode, nlohmann::json::parse(node_json(name, "1"))).value();
}

cluster::StoreOptions options() {
  cluster::StoreOptions o;
  o.stale_after = 30s;
  o.rebuild_interval = 150ms;
  return o;
}

void list_everything(cluster::SnapshotStore& store) {
  store.replace(Kind::kNode, {{"a", node("a")}});
  for (const Kind kind : cluster::kAllKinds) {
    if (kind != Kind::kNode) store.replace(kind, {});
  }
}

// Listed and published: synced.
void sync_everything(cluster::SnapshotStore& store) {
  list_everything(store);
  REQUIRE(store.rebuild());
}

void watch_everything(cluster::SnapshotStore& store, bool watching) {
  for (const Kind kind : cluster::kAllKinds) store.set_watching(kind, watching);
}

}  // namespace

TEST_CASE("the view is stale, and its snapshot empty but present, until every kind has been listed",
          "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  store.replace(Kind::kNode, {{"a", node("a")}});
  for (const Kind kind : cluster::kAllKinds) {
    if (kind != Kind::kNode && kind != Kind::kPersistentVolumeClaim) store.replace(kind, {});
  }
  clock.advance(5s);
  auto view = store.view();
  REQUIRE(view.snapshot != nullptr);
  CHECK(view.snapshot->nodes.empty());
  CHECK(view.stale);
  CHECK(view.age_seconds == 5);
  CHECK_FALSE(store.synced());
  CHECK_FALSE(store.dirty());  // no partial snapshot is ever built
  CHECK_FALSE(store.rebuild());

  store.replace(Kind::kPersistentVolumeClaim, {});
  CHECK_FALSE(store.synced());  // not before the snapshot that goes with it is published
  CHECK(store.dirty());
  CHECK(store.rebuild());
  CHECK(store.synced());
  view = store.view();
  CHECK_FALSE(view.stale);
  CHECK(view.age_seconds == 5);  // nodes were last known current when they were listed, 5 s ago
  CHECK(view.snapshot->nodes.size() == 1);
}

TEST_CASE("staleness follows how long the watches have been down", "[store]") {
  struct Case {
    const char* description;
    std::chrono::seconds watch_down_for;  // -1: the watches stay open
    bool stale;
    std::int64_t age;
  };
  const std::vector<Case> cases{
      {"watches open for an hour with no event, expect fresh with age 0", -1s, false, 0},
      {"watches down for 10 s, expect fresh with age 10", 10s, false, 10},
      {"watches down for exactly stale_after (30 s), expect still fresh", 30s, false, 30},
      {"watches down for 31 s, expect stale with age 31", 31s, true, 31},
      {"watches down for an hour, expect stale with age 3600", 3600s, true, 3600},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      FakeClock clock;
      cluster::SnapshotStore store(options(), clock);
      sync_everything(store);
      watch_everything(store, true);
      if (c.watch_down_for < 0s) {
        clock.advance(1h);
      } else {
        clock.advance(5min);
        watch_everything(store, false);
        clock.advance(c.watch_down_for);
      }
      const auto view = store.view();
      CHECK(view.stale == c.stale);
      CHECK(view.age_seconds == c.age);
      CHECK(store.stats().stale == c.stale);
    }
  }
}

TEST_CASE("with probes expected, open watches are current only as of the API server's last answer",
          "[store]") {
  struct Case {
    const char* description;
    std::chrono::seconds unanswered_for;  // since the last answered probe; the watches stay open throughout
    bool stale;
    std::int64_t age;
  };
  const std::vector<Case> cases{
      {"a probe answered just now, expect fresh with age 0", 0s, false, 0},
      {"no answer for 20 s, expect fresh with age 20", 20s, false, 20},
      {"no answer for exactly stale_after (30 s), expect still fresh", 30s, false, 30},
      {"no answer for 31 s (a partition holding the streams open), expect stale with age 31", 31s, true, 31},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      FakeClock clock;
      cluster::SnapshotStore store(options(), clock);
      sync_everything(store);
      watch_everything(store, true);
      store.expect_probes();
      clock.advance(5min);
      store.probe_answered();
      clock.advance(c.unanswered_for);
      CHECK(store.view().stale == c.stale);
      CHECK(store.view().age_seconds == c.age);
      CHECK(store.stats().seconds_since_probe_answer ==
            Approx(static_cast<double>(c.unanswered_for.count())));
    }
  }
}

TEST_CASE("any answer from the API server counts as an answered probe: a LIST, an event, a watch opening",
          "[store]") {
  const std::vector<std::pair<const char*, std::function<void(cluster::SnapshotStore&)>>> answers{
      {"a LIST", [](cluster::SnapshotStore& s) { s.replace(Kind::kStorageClass, {}); }},
      {"an event", [](cluster::SnapshotStore& s) { s.upsert(Kind::kNode, "b", node("b")); }},
      {"a deletion", [](cluster::SnapshotStore& s) { s.erase(Kind::kNode, "a"); }},
      {"a bookmark", [](cluster::SnapshotStore& s) { s.contact(Kind::kNode); }},
      {"a watch opening", [](cluster::SnapshotStore& s) { s.set_watching(Kind::kNode, true); }},
  };
  for (const auto& [description, answer] : answers) {
    DYNAMIC_SECTION(description) {
      FakeClock clock;
      cluster::SnapshotStore store(options(), clock);
      sync_everything(store);
      watch_everything(store, true);
      store.expect_probes();
      clock.advance(45s);
      REQUIRE(store.view().stale);  // no probe answered for 45 s
      answer(store);
      CHECK_FALSE(store.view().stale);
      CHECK(store.stats().seconds_since_probe_answer == Approx(0.0));
    }
  }
}

TEST_CASE("probes start the clock when expected, count failures, and mean nothing to a store not probed",
          "[store]") {
  FakeClock clock;
  cluster::SnapshotStore probed(options(), clock);
  cluster::SnapshotStore unprobed(options(), clock);
  for (cluster::SnapshotStore* store : {&probed, &unprobed}) {
    sync_everything(*store);
    watch_everything(*store, true);
  }
  probed.expect_probes();  // the first probe never comes back
  probed.count_probe_failure();
  unprobed.probe_answered();  // ignored: nobody said probes would come
  clock.advance(31s);
  CHECK(probed.view().stale);
  CHECK(probed.stats().probe_failures == 1);
  CHECK_FALSE(unprobed.view().stale);
  CHECK(unprobed.view().age_seconds == 0);
  CHECK(unprobed.stats().seconds_since_probe_answer == Approx(0.0));
}

TEST_CASE("one kind without a watch is enough to make the view stale", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  sync_everything(store);
  watch_everything(store, true);
  store.set_watching(Kind::kStorageClass, false);
  clock.advance(45s);
  CHECK(store.view().stale);
  // That kind alone: the rules that do not read it keep their verdicts (#47 item 6).
  CHECK(store.view().stale_kinds == policy::view_kind_bit(policy::ViewKind::kStorageClass));
  CHECK(store.stats().kinds[cluster::index(Kind::kStorageClass)].seconds_since_contact == Approx(45.0));
  CHECK(store.stats().kinds[cluster::index(Kind::kNode)].seconds_since_contact == Approx(0.0));

  // A successful relist of that kind counts as contact: fresh again.
  store.replace(Kind::kStorageClass, {});
  CHECK_FALSE(store.view().stale);
  CHECK(store.view().stale_kinds == 0);
  CHECK(store.view().age_seconds == 0);
}

TEST_CASE("every kind is stale before the sync and while probes go unanswered", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  CHECK(store.view().stale_kinds == policy::kEveryViewKind);
  sync_everything(store);
  watch_everything(store, true);
  store.expect_probes();
  clock.advance(31s);  // the watches stay open, but nothing answers: a partition
  CHECK(store.view().stale_kinds == policy::kEveryViewKind);
  store.probe_answered();
  CHECK(store.view().stale_kinds == 0);
}

TEST_CASE("rebuilds coalesce: changes within the interval wait for it, a change after a quiet spell does not",
          "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  CHECK(store.next_rebuild_at() <= clock.now());  // never rebuilt: due at once
  CHECK(store.rebuild());
  CHECK(store.stats().snapshot_rebuilds == 1);

  store.upsert(Kind::kNode, "b", node("b"));
  clock.advance(20ms);
  store.upsert(Kind::kNode, "c", node("c"));
  CHECK(store.dirty());
  CHECK(store.next_rebuild_at() == clock.now() - 20ms + 150ms);
  clock.advance(130ms);
  CHECK(store.next_rebuild_at() <= clock.now());
  CHECK(store.rebuild());
  CHECK(store.snapshot()->nodes.size() == 3);
  CHECK(store.stats().snapshot_rebuilds == 2);
  CHECK_FALSE(store.dirty());
  CHECK_FALSE(store.rebuild());  // nothing changed: nothing rebuilt

  clock.advance(10s);
  store.erase(Kind::kNode, "b");
  CHECK(store.next_rebuild_at() <= clock.now());
}

TEST_CASE("a request keeps the snapshot it started with while newer ones are published", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  store.rebuild();
  const auto held = store.view().snapshot;
  store.erase(Kind::kNode, "a");
  store.rebuild();
  CHECK(held->nodes.size() == 1);
  CHECK(store.snapshot()->nodes.empty());
  CHECK(held != store.snapshot());
}

TEST_CASE("a rebuild shares the objects that did not change with the snapshot before it", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  store.upsert(Kind::kNode, "b", node("b"));
  REQUIRE(store.rebuild());
  const auto held = store.snapshot();
  auto changed = cluster::parse_object(Kind::kNode, nlohmann::json::parse(node_json("b", "2", "8"))).value();
  store.upsert(Kind::kNode, "b", std::move(changed));
  clock.advance(1s);
  REQUIRE(store.rebuild());
  const auto now = store.snapshot();
  REQUIRE(now->nodes.size() == 2);
  CHECK(&now->nodes[0] == &held->nodes[0]);  // "a": the same object, not a copy
  CHECK(&now->nodes[1] != &held->nodes[1]);
  // The request that holds the old snapshot still sees "b" as it was.
  CHECK(held->nodes[1].allocatable.find("nvidia.com/gpu")->second.to_string() == "4");
  CHECK(now->nodes[1].allocatable.find("nvidia.com/gpu")->second.to_string() == "8");
}

TEST_CASE("share() hands back the cached object when the view is the same, and the new one otherwise",
          "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  const auto cached = store.share(Kind::kNode, "a", node("a"));
  CHECK(store.share(Kind::kNode, "a", node("a")) == cached);
  const auto changed =
      cluster::parse_object(Kind::kNode, nlohmann::json::parse(node_json("a", "2", "8"))).value();
  CHECK(store.share(Kind::kNode, "a", changed) != cached);
  CHECK(cluster::same_view(*store.share(Kind::kNode, "a", changed), changed));
  CHECK(*store.share(Kind::kNode, "z", node("z")) == node("z"));  // not cached: its own
}

TEST_CASE("erasing an object that is not cached changes nothing and needs no rebuild", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  store.rebuild();
  store.erase(Kind::kNode, "not-there");
  CHECK_FALSE(store.dirty());
}

TEST_CASE("stats count cached objects per kind, lists, relists and rebuilds", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  store.replace(Kind::kNode, {{"a", node("a")}, {"b", node("b")}});
  store.upsert(Kind::kNode, "c", node("c"));
  store.count_watch_restart(Kind::kNode);
  store.count_failure(Kind::kNode);
  store.count_malformed(Kind::kNode);
  store.rebuild();
  const cluster::ClusterStats s = store.stats();
  const cluster::KindStats& nodes = s.kinds[cluster::index(Kind::kNode)];
  CHECK(nodes.objects == 3);
  CHECK(nodes.lists == 2);
  CHECK(nodes.relists == 1);
  CHECK(nodes.watch_restarts == 1);
  CHECK(nodes.failures == 1);
  CHECK(nodes.malformed_events == 1);
  CHECK(nodes.synced);
  CHECK(s.kinds[cluster::index(Kind::kStorageClass)].objects == 0);
  CHECK(s.snapshot_rebuilds == 1);
  CHECK(s.synced);
}

}  // namespace gpuadmit::test

#include "gpuadmit/cluster/metrics_text.hpp"

namespace gpuadmit::test {

TEST_CASE("the stats render as Prometheus series named as the metrics page documents", "[store]") {
  cluster::ClusterStats stats;
  stats.synced = true;
  stats.snapshot_age_seconds = 1.5;
  stats.snapshot_rebuilds = 7;
  stats.probe_failures = 2;
  stats.seconds_since_probe_answer = 12.25;
  stats.kinds[cluster::index(cluster::Kind::kNode)].objects = 5000;
  stats.kinds[cluster::index(cluster::Kind::kNode)].watch_restarts = 3;
  stats.kinds[cluster::index(cluster::Kind::kPersistentVolumeClaim)].watching = true;
  const std::string text = cluster::prometheus_text(stats);
  for (const char* line :
       {"gpuadmit_cluster_synced 1\n", "gpuadmit_cluster_stale 0\n",
        "gpuadmit_cluster_snapshot_age_seconds 1.500\n", "gpuadmit_cluster_snapshot_rebuilds_total 7\n",
        "gpuadmit_cluster_probe_failures_total 2\n", "gpuadmit_cluster_seconds_since_probe_answer 12.250\n",
        "gpuadmit_cluster_objects{kind=\"nodes\"} 5000\n",
        "gpuadmit_cluster_watch_restarts_total{kind=\"nodes\"} 3\n",
        "gpuadmit_cluster_watching{kind=\"persistentvolumeclaims\"} 1\n",
        "# TYPE gpuadmit_cluster_relists_total counter\n"}) {
    CHECK_THAT(text, Catch::Contains(line));
  }
}

}  // namespace gpuadmit::test

namespace gpuadmit::test {

TEST_CASE("a MODIFIED object whose typed view did not change (a heartbeat) needs no rebuild", "[store]") {
  FakeClock clock;
  cluster::SnapshotStore store(options(), clock);
  list_everything(store);
  store.rebuild();
  store.upsert(Kind::kNode, "a", node("a"));  // same labels, taints, allocatable, readiness
  CHECK_FALSE(store.dirty());
  auto tainted =
      nlohmann::json::parse(node_json("a", "2", "4", R"({"taints":[{"key":"k","effect":"NoSchedule"}]})"));
  store.upsert(Kind::kNode, "a", cluster::parse_object(Kind::kNode, tainted).value());
  CHECK(store.dirty());
}

TEST_CASE("same_view compares every field the rules read", "[store]") {
  const auto parse = [](Kind kind, const std::string& text) {
    return cluster::parse_object(kind, nlohmann::json::parse(text)).value();
  };
  const std::string base =
      R"({"metadata":{"name":"n","labels":{"a":"1"}},"spec":{},"status":{"allocatable":{"cpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})";
  const std::vector<std::pair<const char*, std::string>> different{
      {"a label",
       R"({"metadata":{"name":"n","labels":{"a":"2"}},"spec":{},"status":{"allocatable":{"cpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})"},
      {"a taint",
       R"({"metadata":{"name":"n","labels":{"a":"1"}},"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"allocatable":{"cpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})"},
      {"cordon",
       R"({"metadata":{"name":"n","labels":{"a":"1"}},"spec":{"unschedulable":true},"status":{"allocatable":{"cpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}})"},
      {"allocatable",
       R"({"metadata":{"name":"n","labels":{"a":"1"}},"spec":{},"status":{"allocatable":{"cpu":"16"},"conditions":[{"type":"Ready","status":"True"}]}})"},
      {"readiness",
       R"({"metadata":{"name":"n","labels":{"a":"1"}},"spec":{},"status":{"allocatable":{"cpu":"8"},"conditions":[{"type":"Ready","status":"False"}]}})"},
  };
  CHECK(cluster::same_view(parse(Kind::kNode, base), parse(Kind::kNode, base)));
  for (const auto& [what, text] : different) {
    INFO(what);
    CHECK_FALSE(cluster::same_view(parse(Kind::kNode, base), parse(Kind::kNode, text)));
  }
  CHECK_FALSE(cluster::same_view(parse(Kind::kResourceQuota, quota_json("ml", "q", "1", "4")),
                                 parse(Kind::kResourceQuota, quota_json("ml", "q", "2", "8"))));
  CHECK(cluster::same_view(parse(Kind::kResourceQuota, quota_json("ml", "q", "1", "4")),
                           parse(Kind::kResourceQuota, quota_json("ml", "q", "2", "4"))));
}

}  // namespace gpuadmit::test
