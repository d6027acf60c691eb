// Leader election on a Lease, as client-go does it: a free Lease is taken, a renewed one is left to its
// holder, an unchanged one is taken over after its duration by this replica's own clock, a write carries the
// resourceVersion read, and a holder that cannot renew stops leading before anyone may take over.
#include <catch2/catch.hpp>

#include <thread>

#include "fake_clock.hpp"
#include "gpuadmit/cluster/lease.hpp"
#include "support/fake_transport.hpp"

namespace gpuadmit::test {
namespace {

using nlohmann::json;

constexpr std::string_view kLease = "/apis/coordination.k8s.io/v1/namespaces/gpuadmit/leases/gpuadmit-audit";

std::string lease_json(const std::string& holder, const std::string& renew, const std::string& rv,
                       int transitions = 0) {
  return json{{"kind", "Lease"},
              {"apiVersion", "coordination.k8s.io/v1"},
              {"metadata", {{"name", "gpuadmit-audit"}, {"namespace", "gpuadmit"}, {"resourceVersion", rv}}},
              {"spec",
               {{"holderIdentity", holder},
                {"leaseDurationSeconds", 15},
                {"acquireTime", "2026-12-04T10:00:00.000000Z"},
                {"renewTime", renew},
                {"leaseTransitions", transitions}}}}
      .dump();
}

struct Election {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  FakeClock clock;
  cluster::LeaderElection election{
      transport, cluster::LeaseSettings{"gpuadmit", "gpuadmit-audit", "replica-a"}, clock,
      cluster::null_sink(), [] { return std::chrono::system_clock::time_point(std::chrono::hours(1)); }};
  void lease_is(const std::string& holder, const std::string& renew, const std::string& rv) const {
    transport->push(std::string(kLease), http_status(200, lease_json(holder, renew, rv)));
  }
  [[nodiscard]] json last_write() const { return json::parse(transport->writes().back().second); }
};

}  // namespace

TEST_CASE("a Lease that does not exist is created with this replica as its holder", "[lease]") {
  Election e;
  e.transport->push(std::string(kLease), http_status(404, R"({"kind":"Status","code":404})"));
  e.transport->push("POST /apis/coordination.k8s.io/v1/namespaces/gpuadmit/leases",
                    http_status(201, lease_json("replica-a", "t0", "7")));
  CHECK(e.election.try_acquire_or_renew({}));
  CHECK(e.election.leading());
  const json sent = e.last_write();
  CHECK(sent["spec"]["holderIdentity"] == "replica-a");
  CHECK(sent["spec"]["leaseDurationSeconds"] == 15);
  CHECK(sent["spec"]["renewTime"] == "1970-01-01T01:00:00.000000Z");
  CHECK_FALSE(sent["metadata"].contains("resourceVersion"));
}

TEST_CASE("a Lease another replica holds is taken over only after it stayed unchanged for its duration",
          "[lease]") {
  Election e;
  e.lease_is("replica-b", "t1", "10");
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  e.clock.advance(std::chrono::seconds(14));
  e.lease_is("replica-b", "t1", "10");
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  CHECK(e.transport->writes().empty());
  e.clock.advance(std::chrono::seconds(2));
  e.lease_is("replica-b", "t1", "10");
  e.transport->push("PUT " + std::string(kLease), http_status(200, lease_json("replica-a", "t2", "11", 1)));
  CHECK(e.election.try_acquire_or_renew({}));
  const json sent = e.last_write();
  CHECK(sent["metadata"]["resourceVersion"] == "10");
  CHECK(sent["spec"]["holderIdentity"] == "replica-a");
  CHECK(sent["spec"]["leaseTransitions"] == 1);
}

TEST_CASE("a holder that keeps renewing is never taken over", "[lease]") {
  Election e;
  e.lease_is("replica-b", "t1", "10");
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  e.clock.advance(std::chrono::seconds(10));
  e.lease_is("replica-b", "t2", "12");
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  e.clock.advance(std::chrono::seconds(10));
  e.lease_is("replica-b", "t2", "12");
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  CHECK(e.transport->writes().empty());
}

TEST_CASE("a Lease given up (no holder) is taken at once", "[lease]") {
  Election e;
  e.lease_is("", "t1", "10");
  e.transport->push("PUT " + std::string(kLease), http_status(200, lease_json("replica-a", "t2", "11", 1)));
  CHECK(e.election.try_acquire_or_renew({}));
}

TEST_CASE("a replica that loses the race for a write does not lead", "[lease]") {
  Election e;
  e.transport->push(std::string(kLease), http_status(404));
  e.transport->push("POST /apis/coordination.k8s.io/v1/namespaces/gpuadmit/leases",
                    http_status(409, R"({"kind":"Status","code":409})"));
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  CHECK_FALSE(e.election.leading());
}

TEST_CASE("the holder keeps leading through failed renewals until the renew deadline, then stops",
          "[lease]") {
  Election e;
  e.lease_is("replica-a", "t1", "10");
  e.transport->push("PUT " + std::string(kLease), http_status(200, lease_json("replica-a", "t2", "11")));
  REQUIRE(e.election.try_acquire_or_renew({}));
  CHECK(e.last_write()["spec"]["acquireTime"] == "2026-12-04T10:00:00.000000Z");  // kept while renewing
  CHECK(e.last_write()["spec"]["leaseTransitions"] == 0);
  e.clock.advance(std::chrono::seconds(5));
  e.transport->push(std::string(kLease), failure("connection refused"));
  CHECK(e.election.try_acquire_or_renew({}));
  e.clock.advance(std::chrono::seconds(6));
  e.transport->push(std::string(kLease), failure("connection refused"));
  CHECK_FALSE(e.election.try_acquire_or_renew({}));
  CHECK_FALSE(e.election.leading());
}

TEST_CASE("a leader that stops gives the Lease up, so another replica takes over at once", "[lease]") {
  Election e;
  e.transport->push(std::string(kLease), http_status(404));
  e.transport->push("POST /apis/coordination.k8s.io/v1/namespaces/gpuadmit/leases",
                    http_status(201, lease_json("replica-a", "t0", "7")));
  e.transport->push("PUT " + std::string(kLease), http_status(200, lease_json("", "t1", "8")));
  {
    std::jthread running([&](std::stop_token stop) { e.election.run(std::move(stop)); });
    for (int i = 0; i < 500 && !e.election.leading(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(e.election.leading());
  }
  CHECK_FALSE(e.election.leading());
  const json released = e.last_write();
  CHECK(e.transport->writes().back().first == "PUT " + std::string(kLease));
  CHECK(released["spec"]["holderIdentity"] == "");
  CHECK(released["spec"]["leaseDurationSeconds"] == 1);
  CHECK(released["metadata"]["resourceVersion"] == "7");
}

TEST_CASE("lease times are written as metav1.MicroTime", "[lease]") {
  const auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'500));
  CHECK(cluster::micro_time(t) == "1970-01-01T00:00:01.500000Z");
}

TEST_CASE("a Lease is read from its spec; something else is refused", "[lease]") {
  const auto record = cluster::parse_lease(json::parse(lease_json("replica-b", "t1", "10", 3)));
  REQUIRE(record.ok());
  CHECK(record->holder == "replica-b");
  CHECK(record->resource_version == "10");
  CHECK(record->transitions == 3);
  CHECK(record->duration_seconds == 15);
  CHECK_FALSE(cluster::parse_lease(json::array()).ok());
  CHECK_FALSE(cluster::parse_lease(json{{"kind", "Secret"}}).ok());
}

}  // namespace gpuadmit::test
