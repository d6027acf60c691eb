// A review that takes long (a tenant's costly claim, up to the review's deadline) runs off the connection's
// I/O thread (#47 item 2): probes, handshakes and other reviews on that thread go on meanwhile.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kSlowReview = 1500ms;

// One I/O thread, so every connection shares it; each review's cluster view takes kSlowReview to arrive, which
// is where a costly claim spends its time too (inside the review, on whatever thread runs it).
TestWebhook one_thread_slow_reviews() {
  return TestWebhook({.configure = [](server::WebhookConfig& c) {
    c.server.threads = 1;
    c.cluster_view = [] {
      std::this_thread::sleep_for(kSlowReview);
      return std::optional<policy::ClusterView>();
    };
  }});
}

TEST_CASE("a slow review holds neither the probes nor a second review on its I/O thread") {
  TestWebhook webhook = one_thread_slow_reviews();
  const std::string body = admission_review(fixture_pod("good-gpu-pod"), "uid-slow");
  const auto review = [&] {
    auto reply = webhook.client().request("POST", "/validate", body);
    return reply ? reply->status : 0;
  };
  auto first = std::async(std::launch::async, review);
  std::this_thread::sleep_for(300ms);  // the first review is evaluating
  const auto second_start = Clock::now();
  auto second = std::async(std::launch::async, review);
  std::this_thread::sleep_for(100ms);

  const auto probe_start = Clock::now();
  auto probe = webhook.client().request("GET", "/healthz");
  const auto probe_took = Clock::now() - probe_start;
  REQUIRE(probe);
  CHECK(probe->status == 200);
  CHECK(probe_took < 500ms);

  CHECK(second.get() == 200);
  // Its own evaluation time, not the first one's remainder on top of it.
  CHECK(Clock::now() - second_start < kSlowReview + 700ms);
  CHECK(first.get() == 200);
}

}  // namespace
}  // namespace gpuadmit::test
