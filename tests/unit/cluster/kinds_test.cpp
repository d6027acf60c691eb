#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"

namespace gpuadmit::test {

TEST_CASE("object keys are namespace/name for namespaced objects and name otherwise", "[kinds]") {
  const std::vector<std::tuple<const char*, std::string, std::string>> cases{
      {"a node", R"({"metadata":{"name":"n1"}})", "n1"},
      {"a claim", R"({"metadata":{"name":"c","namespace":"ml"}})", "ml/c"},
      {"an empty namespace", R"({"metadata":{"name":"c","namespace":""}})", "c"},
  };
  for (const auto& [description, object, key] : cases) {
    INFO(description);
    auto k = cluster::object_key(nlohmann::json::parse(object));
    REQUIRE(k.ok());
    CHECK(*k == key);
  }
  for (const char* bad : {R"({"metadata":{}})", R"({"metadata":{"name":""}})", R"({"metadata":"x"})", "[]",
                          R"({"metadata":{"name":3}})"}) {
    INFO(bad);
    CHECK_FALSE(cluster::object_key(nlohmann::json::parse(bad)).ok());
  }
}

TEST_CASE("each kind is listed at its cluster-wide collection path", "[kinds]") {
  CHECK(cluster::info(cluster::Kind::kNode).path == "/api/v1/nodes");
  CHECK(cluster::info(cluster::Kind::kResourceQuota).path == "/api/v1/resourcequotas");
  CHECK(cluster::info(cluster::Kind::kStorageClass).path == "/apis/storage.k8s.io/v1/storageclasses");
  CHECK(cluster::info(cluster::Kind::kPersistentVolumeClaim).path == "/api/v1/persistentvolumeclaims");
  CHECK(cluster::info(cluster::Kind::kStorageClass).api_version == "storage.k8s.io/v1");
}

TEST_CASE("parse_object gives the typed view of each kind", "[kinds]") {
  const auto quota = cluster::parse_object(
      cluster::Kind::kResourceQuota,
      nlohmann::json::parse(
          R"({"metadata":{"name":"q","namespace":"ml"},"spec":{"hard":{"requests.nvidia.com/gpu":"8"}}})"));
  REQUIRE(quota.ok());
  CHECK(std::get<k8s::ResourceQuota>(*quota).namespace_ == "ml");
  const auto sc = cluster::parse_object(
      cluster::Kind::kStorageClass,
      nlohmann::json::parse(
          R"({"metadata":{"name":"fast","annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},"provisioner":"x"})"));
  REQUIRE(sc.ok());
  CHECK(std::get<k8s::StorageClass>(*sc).is_default);
}

}  // namespace gpuadmit::test
