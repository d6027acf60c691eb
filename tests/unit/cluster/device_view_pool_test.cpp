#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/device_view_pool.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "support/cluster_objects.hpp"

namespace gpuadmit::test {
namespace {

using cluster::Kind;

k8s::ResourceSlice slice(const std::string& node, const std::string& product = "NVIDIA A100-SXM4-80GB",
                         int gpus = 8) {
  return std::get<k8s::ResourceSlice>(
      cluster::parse_object(Kind::kResourceSlice, nlohmann::json::parse(slice_json(node, "1", gpus, product)))
          .value());
}

}  // namespace

TEST_CASE("the cache holds one view of the same GPUs however many nodes have them, and apart from others",
          "[pool]") {
  FakeClock clock;
  cluster::SnapshotStore store({}, clock);
  for (const Kind kind : cluster::kAllKinds) {
    if (kind != Kind::kResourceSlice) store.replace(kind, {});
  }
  store.replace(Kind::kResourceSlice,
                {{"a", slice("a")}, {"b", slice("b")}, {"t4", slice("t4", "Tesla T4", 1)}});
  store.upsert(Kind::kResourceSlice, "c", slice("c"));
  REQUIRE(store.rebuild());
  const auto snapshot = store.snapshot();
  REQUIRE(snapshot->resource_slices.size() == 4);
  const k8s::DeviceView* a100 = snapshot->resource_slices[0].devices[0].view.get();
  for (const char* node : {"a", "b", "c"}) {
    INFO(node);
    const auto it = std::find_if(snapshot->resource_slices.begin(), snapshot->resource_slices.end(),
                                 [&](const k8s::ResourceSlice& s) { return s.node_name == node; });
    REQUIRE(it != snapshot->resource_slices.end());
    for (const k8s::Device& device : it->devices) CHECK(device.view.get() == a100);
  }
  const auto t4 = std::find_if(snapshot->resource_slices.begin(), snapshot->resource_slices.end(),
                               [](const k8s::ResourceSlice& s) { return s.node_name == "t4"; });
  REQUIRE(t4 != snapshot->resource_slices.end());
  CHECK(t4->devices[0].view.get() != a100);
  CHECK(t4->devices[0].view->attributes.at("productName") == k8s::AttributeValue(std::string("Tesla T4")));
  // What tells the devices apart stays theirs.
  CHECK(snapshot->resource_slices[0].devices[0].attribute("uuid") !=
        snapshot->resource_slices[0].devices[1].attribute("uuid"));
  CHECK(store.device_views().size() == 2);
}

TEST_CASE("views no cached slice holds any more are forgotten as the pool grows", "[pool]") {
  cluster::DeviceViewPool pool;
  std::vector<k8s::ResourceSlice> kept;
  for (int i = 0; i < 3000; ++i) {
    k8s::ResourceSlice s = slice("n" + std::to_string(i), "GPU model " + std::to_string(i), 2);
    pool.intern(s);
    if (i % 100 == 0) kept.push_back(std::move(s));  // the rest are dropped at once
  }
  // 30 live views; the dead ones are swept each time the pool doubles past 1,024 entries.
  CHECK(pool.size() < 1100);
  k8s::ResourceSlice again = slice("x", "GPU model 0", 2);  // two: the uuids are their own, not the view's
  pool.intern(again);
  CHECK(again.devices[0].view == kept[0].devices[0].view);
}

}  // namespace gpuadmit::test
