// API discovery for gpuadmit audit: which of the policy's workload kinds a group serves, at its preferred
// version, under which plural; a group the API server does not know serves none.
#include <catch2/catch.hpp>

#include "gpuadmit/cluster/discovery.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {

TEST_CASE("discovery finds the kinds a group serves at its preferred version, not their subresources",
          "[discovery]") {
  FakeTransport transport;
  transport.push(
      "/apis/kubeflow.org",
      {std::nullopt,
       200,
       R"({"kind":"APIGroup","name":"kubeflow.org","preferredVersion":{"groupVersion":"kubeflow.org/v1"}})",
       {},
       false});
  transport.push("/apis/kubeflow.org/v1", {std::nullopt,
                                           200,
                                           R"({"kind":"APIResourceList","resources":[
                      {"name":"pytorchjobs","kind":"PyTorchJob","namespaced":true},
                      {"name":"pytorchjobs/status","kind":"PyTorchJob","namespaced":true},
                      {"name":"notebooks","kind":"Notebook","namespaced":true},
                      {"name":"profiles","kind":"Profile","namespaced":false}]})",
                                           {},
                                           false});
  auto served = cluster::discover_kinds(transport, "kubeflow.org", {"PyTorchJob", "MPIJob", "Profile"});
  REQUIRE(served.ok());
  REQUIRE(served->size() == 2);
  CHECK((*served)[0].path() == "/apis/kubeflow.org/v1/pytorchjobs");
  CHECK((*served)[0].namespaced);
  CHECK((*served)[1].kind == "Profile");
  CHECK_FALSE((*served)[1].namespaced);
}

TEST_CASE("the core group is /api/v1", "[discovery]") {
  FakeTransport transport;
  transport.push(
      "/api/v1",
      {std::nullopt, 200, R"({"resources":[{"name":"pods","kind":"Pod","namespaced":true}]})", {}, false});
  auto served = cluster::discover_kinds(transport, "", {"Pod"});
  REQUIRE(served.ok());
  REQUIRE(served->size() == 1);
  CHECK(served->front().path() == "/api/v1/pods");
}

TEST_CASE("a group the API server does not serve has no kinds; another failure is an error", "[discovery]") {
  FakeTransport transport;
  transport.push("/apis/ray.io", http_status(404, R"({"kind":"Status","code":404})"));
  auto none = cluster::discover_kinds(transport, "ray.io", {"RayCluster"});
  REQUIRE(none.ok());
  CHECK(none->empty());
  transport.push("/apis/ray.io", http_status(403, R"({"kind":"Status","code":403})"));
  auto forbidden = cluster::discover_kinds(transport, "ray.io", {"RayCluster"});
  REQUIRE_FALSE(forbidden.ok());
  CHECK(forbidden.error().message == "GET /apis/ray.io: HTTP 403");
}

}  // namespace gpuadmit::test
