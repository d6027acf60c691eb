#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>

#include "gpuadmit/cluster/policy_objects.hpp"
#include "support/fake_transport.hpp"

using gpuadmit::cluster::PolicyObjects;
using gpuadmit::cluster::PolicyObjectWatch;
using gpuadmit::test::FakeTransport;
using nlohmann::json;

namespace {

const std::string kClusterPath = "/apis/gpuadmit.io/v1alpha1/clustergpupolicies";
const std::string kTeamPath = "/apis/gpuadmit.io/v1alpha1/gpupolicies";

// What on_change was called with, in order; waits for the n-th call.
class Reports {
 public:
  PolicyObjectWatch::OnChange handler() {
    return [this](const PolicyObjects& objects) {
      const std::lock_guard lock(mutex_);
      seen_.push_back(objects);
      changed_.notify_all();
    };
  }
  PolicyObjects wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    REQUIRE(changed_.wait_for(lock, std::chrono::seconds(10), [&] { return seen_.size() >= n; }));
    return seen_[n - 1];
  }
  std::size_t count() {
    const std::lock_guard lock(mutex_);
    return seen_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<PolicyObjects> seen_;
};

gpuadmit::cluster::PolicyWatchOptions quiet() {
  gpuadmit::cluster::PolicyWatchOptions options;
  options.log = gpuadmit::cluster::null_sink();
  options.backoff = {std::chrono::milliseconds(1), std::chrono::milliseconds(2)};
  return options;
}

}  // namespace

TEST_CASE("policy objects of both kinds reach on_change once both are listed, kind and apiVersion set",
          "[policy-objects]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kClusterPath,
                  gpuadmit::test::list_response(R"([{"metadata": {"name": "default"}}])", "10"));
  transport->push(kTeamPath, gpuadmit::test::list_response(
                                 R"([{"metadata": {"name": "strict", "namespace": "team-a"}}])", "11"));
  Reports reports;
  PolicyObjectWatch watch(transport, reports.handler(), quiet());
  watch.start();
  const PolicyObjects objects = reports.wait_for(1);
  CHECK(watch.listed());
  REQUIRE(objects.cluster.size() == 1);
  REQUIRE(objects.namespaced.size() == 1);
  CHECK(objects.cluster[0]["kind"] == "ClusterGPUPolicy");
  CHECK(objects.namespaced[0]["kind"] == "GPUPolicy");
  CHECK(objects.namespaced[0]["apiVersion"] == "gpuadmit.io/v1alpha1");
  // Both then watch from their list's resourceVersion.
  REQUIRE(transport->wait_for_calls(kClusterPath, 2));
  REQUIRE(transport->wait_for_calls(kTeamPath, 2));
  CHECK_THAT(transport->targets(kClusterPath).back(),
             Catch::Contains("watch=1") && Catch::Contains("resourceVersion=10"));
  watch.stop();
}

TEST_CASE("a change on a watch lists the collection again and reports the new state", "[policy-objects]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kClusterPath, gpuadmit::test::list_response("[]", "10"));
  transport->push(kTeamPath, gpuadmit::test::list_response("[]", "11"));
  Reports reports;
  PolicyObjectWatch watch(transport, reports.handler(), quiet());
  watch.start();
  CHECK(reports.wait_for(1).cluster.empty());
  transport->push(kClusterPath,
                  gpuadmit::test::watch_stream(
                      {R"({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12"}}})",
                       R"({"type": "ADDED", "object": {"metadata": {"name": "default"}}})"}));
  transport->push(kClusterPath,
                  gpuadmit::test::list_response(R"([{"metadata": {"name": "default"}}])", "13"));
  CHECK(reports.wait_for(2).cluster.size() == 1);
  watch.stop();
}

TEST_CASE("a collection whose CRD is missing counts as listed and empty", "[policy-objects]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kClusterPath,
                  gpuadmit::test::http_status(404, R"({"kind": "Status", "message": "not found"})"));
  transport->push(kTeamPath, gpuadmit::test::http_status(404));
  Reports reports;
  PolicyObjectWatch watch(transport, reports.handler(), quiet());
  watch.start();
  const PolicyObjects objects = reports.wait_for(1);
  CHECK(watch.listed());
  CHECK(objects.cluster.empty());
  CHECK(objects.namespaced.empty());
  watch.stop();
}

TEST_CASE("a failed list is not reported as an empty one, and is tried again", "[policy-objects]") {
  auto transport = std::make_shared<FakeTransport>();
  transport->push(kClusterPath, gpuadmit::test::http_status(403, R"({"message": "forbidden"})"));
  transport->push(kClusterPath, gpuadmit::test::list_response(R"([{"metadata": {"name": "default"}}])", "5"));
  transport->push(kTeamPath, gpuadmit::test::list_response("[]", "6"));
  Reports reports;
  PolicyObjectWatch watch(transport, reports.handler(), quiet());
  watch.start();
  CHECK(reports.wait_for(1).cluster.size() == 1);
  CHECK(reports.count() == 1);
  watch.stop();
}

TEST_CASE("status goes to the status subresource as a merge patch", "[policy-objects]") {
  auto [kind, object, target] = GENERATE(table<const char*, const char*, std::string>({
      {"ClusterGPUPolicy", R"({"kind": "ClusterGPUPolicy", "metadata": {"name": "default"}})",
       "/apis/gpuadmit.io/v1alpha1/clustergpupolicies/default/status"},
      {"GPUPolicy", R"({"kind": "GPUPolicy", "metadata": {"name": "strict", "namespace": "team-a"}})",
       "/apis/gpuadmit.io/v1alpha1/namespaces/team-a/gpupolicies/strict/status"},
  }));
  CAPTURE(kind);
  auto transport = std::make_shared<FakeTransport>();
  transport->push(target, gpuadmit::test::http_status(200, "{}"));
  PolicyObjectWatch watch(
      transport, [](const PolicyObjects&) {}, quiet());
  REQUIRE(watch.patch_status(json::parse(object), {{"active", true}}).ok());
  const auto patches = transport->patches();
  REQUIRE(patches.size() == 1);
  CHECK(patches[0].first == target);
  CHECK(json::parse(patches[0].second) == json{{"status", {{"active", true}}}});

  transport->push(target, gpuadmit::test::http_status(403, R"({"message": "cannot patch"})"));
  const auto refused = watch.patch_status(json::parse(object), {{"active", true}});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("HTTP 403: cannot patch"));
}
