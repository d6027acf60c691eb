// Graceful shutdown as SIGTERM triggers it (Webhook::begin_shutdown is what the signal handler calls): the
// apiserver keeps using its pooled keep-alive connections to a terminating pod, so none of its requests may
// fail while the pod drains.
#include <catch2/catch.hpp>

#include <future>

#include "load.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;

TEST_CASE("a drain answers every request, says Connection: close, then closes idle connections and stops") {
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.drain_period = 3s; }});
  constexpr int kConnections = 4;
  Load load([&] { return webhook.client(); },
            {.connections = kConnections,
             .requests_per_connection = 1000,
             .body = admission_review(fixture_pod("good-gpu-pod"), "uid-drain")});
  REQUIRE(eventually([&] { return load.completed() >= 100; }, 20s));

  // A pooled connection that sits idle through the whole drain.
  HttpsClient idle = webhook.client();
  REQUIRE(idle.request("GET", "/healthz"));

  webhook.webhook().begin_shutdown();
  auto stopped = std::async(std::launch::async, [&] { return webhook.webhook().wait(); });

  // Not ready any more, but still answering, on fresh connections too.
  auto ready = webhook.client().request("GET", "/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 503);
  CHECK_FALSE(ready->keep_alive);

  // Every load connection is told to close and reconnects; nothing fails meanwhile.
  CHECK(eventually([&] { return load.threads_that_saw_close() == kConnections; }));
  const std::uint64_t after_close = load.completed();
  CHECK(eventually([&] { return load.completed() >= after_close + 20; }));
  load.stop();  // the apiserver has moved to other endpoints
  for (const std::string& failure : load.failures()) UNSCOPED_INFO(failure);
  CHECK(load.failures().empty());

  // After the drain period the idle connection is closed by the server, and the server stops cleanly.
  CHECK(idle.wait_for_close(10s));
  REQUIRE(stopped.wait_for(10s) == std::future_status::ready);
  CHECK(stopped.get());
}

TEST_CASE("a request in flight when the drain ends is still answered") {
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) {
    c.server.drain_period = 200ms;
    c.server.limits.body_timeout = 5s;
  }});
  // The request has started (header sent) but its body is still coming when the drain period ends.
  HttpsClient client = webhook.client();
  const std::string body = admission_review(fixture_pod("good-gpu-pod"), "uid-inflight");
  REQUIRE(client.connect());
  REQUIRE(
      client.write_raw("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                       "Content-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 10)));
  REQUIRE(eventually([&] { return webhook.metric("gpuadmit_http_requests_in_flight") == 1; }));
  webhook.webhook().begin_shutdown();
  auto stopped = std::async(std::launch::async, [&] { return webhook.webhook().wait(); });
  // The listener closes at the end of the drain period; the request is still in flight.
  REQUIRE(eventually([&] { return !webhook.client().connect(); }));
  REQUIRE(client.write_raw(body.substr(10)));
  auto reply = client.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK_FALSE(reply->keep_alive);
  REQUIRE(stopped.wait_for(10s) == std::future_status::ready);
  CHECK(stopped.get());
}

}  // namespace
}  // namespace gpuadmit::test
