#include <catch2/catch.hpp>

#include <array>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/dump.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "support/cluster_objects.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

// One object of each of the four kinds the view has always read.
void serve_core_kinds(FakeTransport& transport) {
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
}

}  // namespace

TEST_CASE("a dump is a v1 List of every kind with kind and apiVersion set, readable as a snapshot",
          "[dump]") {
  FakeTransport transport;
  serve_core_kinds(transport);
  transport.push(kDeviceClasses, list_response("[" + device_class_json("gpu.nvidia.com", "5") + "]", "10"));
  transport.push(kSlices,
                 list_response("[" + slice_json("n1", "6", 4) + "," + slice_json("n2", "7") + "]", "10"));
  transport.push(kResourceClaims, list_response("[" + resource_claim_json("ml", "shared", "8") + "]", "10"));
  transport.push(kClaimTemplates, list_response("[" + claim_template_json("ml", "one-gpu", "9") + "]", "10"));
  transport.push(kNodePools, list_response("[" + node_pool_json("gpu", "11") + "]", "12"));
  auto dump = cluster::dump_cluster(transport);
  REQUIRE(dump.ok());
  const nlohmann::json& list = dump->list;
  CHECK(list["apiVersion"] == "v1");
  CHECK(list["kind"] == "List");
  REQUIRE(list["items"].size() == 10);
  CHECK(list["items"][0]["kind"] == "Node");
  CHECK(list["items"][0]["apiVersion"] == "v1");
  CHECK_FALSE(list["items"][0]["metadata"].contains("managedFields"));
  CHECK(list["items"][2]["apiVersion"] == "storage.k8s.io/v1");
  CHECK(list["items"][3]["kind"] == "PersistentVolumeClaim");
  const std::array<const char*, 5> dra{"DeviceClass", "ResourceSlice", "ResourceSlice", "ResourceClaim",
                                       "ResourceClaimTemplate"};
  for (std::size_t i = 0; i < dra.size(); ++i) {
    CHECK(list["items"][4 + i]["kind"] == dra[i]);
    CHECK(list["items"][4 + i]["apiVersion"] == "resource.k8s.io/v1");
  }
  CHECK(list["items"][9]["kind"] == "NodePool");
  CHECK(list["items"][9]["apiVersion"] == "karpenter.sh/v1");
  CHECK(dump->counts == std::array<std::size_t, 9>{1, 1, 1, 1, 1, 2, 1, 1, 1});
  CHECK(dump->unavailable.empty());

  auto snapshot = policy::snapshot_from_list(list);
  REQUIRE(snapshot.ok());
  CHECK(snapshot->nodes.size() == 1);
  CHECK(snapshot->quotas.size() == 1);
  CHECK(snapshot->storage_classes.size() == 1);
  CHECK(snapshot->claims.size() == 1);
  CHECK(snapshot->device_classes.size() == 1);
  CHECK(snapshot->resource_slices.size() == 2);
  CHECK(snapshot->resource_claims.size() == 1);
  CHECK(snapshot->claim_templates.size() == 1);
  CHECK(snapshot->node_pools.size() == 1);
}

TEST_CASE(
    "a dump goes without a DRA kind or Karpenter's NodePool that the API server does not serve or "
    "refuses, and says so",
    "[dump]") {
  FakeTransport transport;
  serve_core_kinds(transport);
  transport.push(kDeviceClasses, not_found());
  transport.push(kSlices, http_status(403, R"({"kind":"Status","message":"resourceslices is forbidden"})"));
  transport.push(kResourceClaims, list_response("[]", "10"));
  transport.push(kClaimTemplates, not_found());
  transport.push(kNodePools, not_found());
  auto dump = cluster::dump_cluster(transport);
  REQUIRE(dump.ok());
  CHECK(dump->list["items"].size() == 4);
  REQUIRE(dump->unavailable.size() == 4);
  CHECK(dump->unavailable[3].kind == cluster::Kind::kNodePool);
  CHECK(dump->unavailable[0].kind == cluster::Kind::kDeviceClass);
  CHECK(dump->unavailable[0].error ==
        "LIST deviceclasses: HTTP 404: the server could not find the requested resource");
  CHECK(dump->unavailable[1].kind == cluster::Kind::kResourceSlice);
  CHECK(dump->unavailable[1].error == "LIST resourceslices: HTTP 403: resourceslices is forbidden");
  CHECK(dump->unavailable[2].kind == cluster::Kind::kResourceClaimTemplate);
  CHECK(policy::snapshot_from_list(dump->list).ok());
}

TEST_CASE("a dump fails with the first kind that cannot be listed, but for a DRA kind's 404 or 403",
          "[dump]") {
  struct Case {
    const char* description;
    std::string path;  // answered `answer`; the kinds before it list empty
    Exchange answer;
    std::string error;
  };
  const std::vector<Case> cases{
      {"a core kind refused (403)", kQuotas,
       http_status(403, R"({"kind":"Status","message":"resourcequotas is forbidden","code":403})"),
       "LIST resourcequotas: HTTP 403: resourcequotas is forbidden"},
      {"a core kind not found (404)", kQuotas, not_found(),
       "LIST resourcequotas: HTTP 404: the server could not find the requested resource"},
      {"a DRA kind answered 500", kSlices, http_status(500, "etcd is sad"),
       "LIST resourceslices: HTTP 500: etcd is sad"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.description) {
      FakeTransport transport;
      for (const std::string& path : kAllPaths) {
        if (path == c.path) break;
        transport.push(path, list_response("[]", "1"));
      }
      transport.push(c.path, c.answer);
      auto dump = cluster::dump_cluster(transport);
      REQUIRE_FALSE(dump.ok());
      CHECK(dump.error().message == c.error);
    }
  }
}

}  // namespace gpuadmit::test
