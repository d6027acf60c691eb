#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"
#include "support/cluster_objects.hpp"

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

TEST_CASE(
    "each kind is listed at its cluster-wide collection path; the DRA kinds and Karpenter's NodePool are "
    "optional",
    "[kinds]") {
  struct Case {
    cluster::Kind kind;
    const char* resource;
    const char* api_version;
    const char* path;
    bool optional;
  };
  const std::vector<Case> cases{
      {cluster::Kind::kNode, "nodes", "v1", "/api/v1/nodes", false},
      {cluster::Kind::kResourceQuota, "resourcequotas", "v1", "/api/v1/resourcequotas", false},
      {cluster::Kind::kStorageClass, "storageclasses", "storage.k8s.io/v1",
       "/apis/storage.k8s.io/v1/storageclasses", false},
      {cluster::Kind::kPersistentVolumeClaim, "persistentvolumeclaims", "v1",
       "/api/v1/persistentvolumeclaims", false},
      {cluster::Kind::kDeviceClass, "deviceclasses", "resource.k8s.io/v1",
       "/apis/resource.k8s.io/v1/deviceclasses", true},
      {cluster::Kind::kResourceSlice, "resourceslices", "resource.k8s.io/v1",
       "/apis/resource.k8s.io/v1/resourceslices", true},
      {cluster::Kind::kResourceClaim, "resourceclaims", "resource.k8s.io/v1",
       "/apis/resource.k8s.io/v1/resourceclaims", true},
      {cluster::Kind::kResourceClaimTemplate, "resourceclaimtemplates", "resource.k8s.io/v1",
       "/apis/resource.k8s.io/v1/resourceclaimtemplates", true},
      {cluster::Kind::kNodePool, "nodepools", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodepools", true},
  };
  REQUIRE(cases.size() == cluster::kKindCount);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    INFO(c.resource);
    CHECK(cluster::kAllKinds[i] == c.kind);
    CHECK(cluster::index(c.kind) == i);
    CHECK(cluster::info(c.kind).resource == c.resource);
    CHECK(cluster::info(c.kind).api_version == c.api_version);
    CHECK(cluster::info(c.kind).path == c.path);
    CHECK(cluster::info(c.kind).optional == c.optional);
  }
}

TEST_CASE("a 404 or 403 means going without the kind for the optional kinds only, and no other status does",
          "[kinds]") {
  struct Case {
    cluster::Kind kind;
    int status;
    bool unavailable;
  };
  const std::vector<Case> cases{
      {cluster::Kind::kResourceSlice, 404, true},  {cluster::Kind::kResourceSlice, 403, true},
      {cluster::Kind::kDeviceClass, 404, true},    {cluster::Kind::kResourceClaimTemplate, 403, true},
      {cluster::Kind::kResourceSlice, 401, false}, {cluster::Kind::kResourceSlice, 500, false},
      {cluster::Kind::kResourceSlice, 410, false}, {cluster::Kind::kResourceSlice, 200, false},
      {cluster::Kind::kNode, 404, false},          {cluster::Kind::kStorageClass, 403, false},
      {cluster::Kind::kNodePool, 404, true},       {cluster::Kind::kNodePool, 500, false},
  };
  for (const Case& c : cases) {
    INFO(cluster::info(c.kind).resource << " answered " << c.status);
    CHECK(cluster::unavailable_answer(c.kind, c.status) == c.unavailable);
  }
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

TEST_CASE("parse_object gives the typed view of each DRA kind", "[kinds]") {
  const auto parse = [](cluster::Kind kind, const std::string& text) {
    auto parsed = cluster::parse_object(kind, nlohmann::json::parse(text));
    REQUIRE(parsed.ok());
    return *parsed;
  };
  const auto cls = parse(cluster::Kind::kDeviceClass, device_class_json("gpu.nvidia.com", "1"));
  CHECK(std::get<k8s::DeviceClass>(cls).name == "gpu.nvidia.com");
  CHECK(std::get<k8s::DeviceClass>(cls).selectors ==
        std::vector<std::string>{"device.driver == 'gpu.nvidia.com'"});
  const auto slice =
      std::get<k8s::ResourceSlice>(parse(cluster::Kind::kResourceSlice, slice_json("node-a", "1")));
  CHECK(slice.node_name == "node-a");
  CHECK(slice.driver == "gpu.nvidia.com");
  CHECK(slice.devices.size() == 8);
  const auto claim = std::get<k8s::ResourceClaim>(
      parse(cluster::Kind::kResourceClaim, resource_claim_json("ml", "c", "1", 2)));
  CHECK(claim.meta.namespace_ == "ml");
  REQUIRE(claim.spec.requests.size() == 1);
  CHECK(claim.spec.requests[0].alternatives.at(0).count == 2);
  const auto tmpl = std::get<k8s::ResourceClaimTemplate>(
      parse(cluster::Kind::kResourceClaimTemplate, claim_template_json("ml", "t", "1")));
  CHECK(tmpl.meta.name == "t");
  CHECK(tmpl.spec.requests.at(0).alternatives.at(0).device_class == "gpu.nvidia.com");
  CHECK_FALSE(
      cluster::parse_object(cluster::Kind::kResourceSlice,
                            nlohmann::json::parse(R"({"metadata":{"name":"s"},"spec":{"devices":3}})"))
          .ok());
}

TEST_CASE("a slice listed again with only a new resourceVersion is the same view, a changed device is not",
          "[kinds]") {
  const auto parse = [](const std::string& text) {
    return cluster::parse_object(cluster::Kind::kResourceSlice, nlohmann::json::parse(text)).value();
  };
  CHECK(cluster::same_view(parse(slice_json("a", "1")), parse(slice_json("a", "2"))));
  CHECK_FALSE(cluster::same_view(parse(slice_json("a", "1")), parse(slice_json("a", "1", 4))));
  CHECK_FALSE(cluster::same_view(parse(slice_json("a", "1")), parse(slice_json("a", "1", 8, "Tesla T4"))));
  CHECK_FALSE(cluster::same_view(
      parse(slice_json("a", "1")),
      cluster::parse_object(cluster::Kind::kDeviceClass, nlohmann::json::parse(device_class_json("a", "1")))
          .value()));
}

}  // namespace gpuadmit::test
