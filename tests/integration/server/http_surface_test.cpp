// The HTTP surface over real TLS: routing, status codes, limits, keep-alive, deadlines, connection cap.
#include <catch2/catch.hpp>

#include <cctype>
#include <chrono>
#include <thread>

#include <openssl/ssl.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;

// Every response written: a connection's activity is recorded a moment after its client has read the
// response, so a test that orders connections by activity waits for it.
bool all_written(const TestWebhook& webhook) {
  return eventually([&] { return webhook.metric("gpuadmit_http_requests_in_flight") == 0; });
}

// At the cap, `newcomer` gets its answer: `evicted` is closed to make room, and `kept` is still served on
// the connection it had.
void takes_slot_of(HttpsClient& newcomer, HttpsClient& evicted, HttpsClient& kept) {
  auto reply = newcomer.request("GET", "/healthz");
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(evicted.wait_for_close(5s));
  auto again = kept.request("GET", "/healthz");
  REQUIRE(again);
  CHECK(kept.connections_made() == 1);
}

std::string valid_review() {
  return admission_review(fixture_pod("good-gpu-pod"), "uid-ok");
}

TEST_CASE("each route answers with its status code") {
  TestWebhook webhook;
  // description, method, target, content type, body, status, a header that must be present ("name: value")
  auto [description, method, target, content_type, body, status, header] =
      GENERATE(table<std::string, std::string, std::string, std::string, std::string, int, std::string>({
          {"a review on /validate is 200", "POST", "/validate", "application/json", valid_review(), 200, ""},
          {"a review on /mutate is 200", "POST", "/mutate", "application/json", valid_review(), 200, ""},
          {"the query string is ignored", "POST", "/validate?timeout=10s", "application/json", valid_review(),
           200, ""},
          {"a JSON content type with parameters is accepted", "POST", "/mutate",
           "application/json; charset=utf-8", valid_review(), 200, ""},
          {"an unknown path is 404", "POST", "/admit", "application/json", valid_review(), 404, ""},
          {"the root path is 404", "GET", "/", "", "", 404, ""},
          {"GET on /mutate is 405 and says POST", "GET", "/mutate", "", "", 405, "allow: POST"},
          {"POST on /healthz is 405 and says GET", "POST", "/healthz", "application/json", "{}", 405,
           "allow: GET"},
          {"a review sent as text/plain is 415", "POST", "/validate", "text/plain", valid_review(), 415, ""},
          {"a review with no content type is 415", "POST", "/validate", "", valid_review(), 415, ""},
          {"a body that is not JSON is 400", "POST", "/validate", "application/json", "{not json", 400, ""},
          {"an empty body is 400", "POST", "/mutate", "application/json", "", 400, ""},
          {"healthz is 200", "GET", "/healthz", "", "", 200, ""},
          {"readyz is 200 while serving", "GET", "/readyz", "", "", 200, ""},
          {"metrics is Prometheus text", "GET", "/metrics", "", "", 200,
           "content-type: text/plain; version=0.0.4; charset=utf-8"},
      }));
  INFO(description);
  HttpsClient client = webhook.client();
  auto reply = client.request(method, target, body, content_type);
  REQUIRE(reply);
  INFO(reply->body);
  CHECK(reply->status == status);
  if (!header.empty()) {
    const auto colon = header.find(": ");
    CHECK(reply->header(header.substr(0, colon)) == header.substr(colon + 2));
  }
}

TEST_CASE("metrics report the heap the allocator holds, by state") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  auto reply = client.request("GET", "/metrics", "");
  REQUIRE(reply);
  INFO(reply->body);
  CHECK_THAT(reply->body, Catch::Contains("# TYPE gpuadmit_allocator_bytes gauge\n"));
  for (const char* state : {"in_use", "free", "released"}) {
    const std::string series = std::string("\",state=\"") + state + "\"} ";
    const std::size_t at = reply->body.find(series);
    REQUIRE(at != std::string::npos);
    CHECK(reply->body.rfind("\ngpuadmit_allocator_bytes{allocator=\"", at) ==
          reply->body.rfind('\n', at));  // on a line of its own family
    CHECK(std::isdigit(static_cast<unsigned char>(reply->body[at + series.size()])) != 0);
  }
}

TEST_CASE("two requests on one keep-alive connection share it") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  for (int i = 0; i < 2; ++i) {
    auto reply = client.request("POST", "/validate", valid_review());
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->keep_alive);
  }
  CHECK(client.connections_made() == 1);
  CHECK(webhook.metric("gpuadmit_http_connections_accepted_total") == 1);
}

TEST_CASE("reviews of every size up to the body limit are read whole on one keep-alive connection") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  // The server sizes its read buffer from Content-Length (up to one TLS record): bodies below, at and far
  // above a record, then a small one again on the same connection, must each arrive whole.
  for (const std::size_t padding :
       {std::size_t{0}, std::size_t{3'000}, std::size_t{16'384}, std::size_t{40'000}, std::size_t{1'000'000},
        std::size_t{6'000'000}, std::size_t{0}}) {
    nlohmann::json pod = fixture_pod("good-gpu-pod");
    pod["metadata"]["annotations"]["example.com/padding"] = std::string(padding, 'p');
    const std::string uid = "uid-padded-" + std::to_string(padding);
    INFO("padding " << padding);
    auto reply = client.request("POST", "/validate", admission_review(pod, uid));
    REQUIRE(reply);
    CHECK(reply->status == 200);
    const auto review = nlohmann::json::parse(reply->body);
    CHECK(review["response"]["uid"] == uid);
    CHECK(review["response"]["allowed"] == true);
  }
  CHECK(client.connections_made() == 1);
}

TEST_CASE("a body above 7 MiB is refused with 413 before it is read") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  // The whole body is sent: the server must answer 413 and still let the client read it (no RST).
  const std::string body(7 * 1024 * 1024 + 1, 'x');
  auto reply = client.request("POST", "/validate", body);
  REQUIRE(reply);
  CHECK(reply->status == 413);
  CHECK_FALSE(reply->keep_alive);
}

TEST_CASE("a header above 16 KiB is refused with 431") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  REQUIRE(client.connect());
  REQUIRE(client.write_raw(
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + std::string(20 * 1024, 'a') + "\r\n\r\n"));
  auto reply = client.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 431);
}

TEST_CASE("TLS below 1.2 and ciphers outside ECDHE AEAD are refused") {
  TestWebhook webhook;
  // description, min version, max version, cipher list (TLS <= 1.2), accepted, negotiated version
  auto [description, min_version, max_version, ciphers, accepted, negotiated] =
      GENERATE(table<std::string, int, int, std::string, bool, std::string>({
          {"TLS 1.3 is accepted", TLS1_3_VERSION, TLS1_3_VERSION, "", true, "TLSv1.3"},
          {"TLS 1.2 is accepted", TLS1_2_VERSION, TLS1_2_VERSION, "", true, "TLSv1.2"},
          {"TLS 1.1 is refused", TLS1_1_VERSION, TLS1_1_VERSION, "DEFAULT:@SECLEVEL=0", false, ""},
          {"TLS 1.0 is refused", TLS1_VERSION, TLS1_VERSION, "DEFAULT:@SECLEVEL=0", false, ""},
          {"TLS 1.2 with only CBC ciphers is refused", TLS1_2_VERSION, TLS1_2_VERSION,
           "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:AES128-SHA", false, ""},
          {"TLS 1.2 with only RSA key exchange is refused", TLS1_2_VERSION, TLS1_2_VERSION,
           "AES128-GCM-SHA256:AES256-GCM-SHA384", false, ""},
      }));
  INFO(description);
  ClientOptions options;
  options.min_tls_version = min_version;
  options.max_tls_version = max_version;
  options.cipher_list = ciphers;
  HttpsClient client = webhook.client(options);
  const auto connected = client.connect();
  CHECK(static_cast<bool>(connected) == accepted);
  if (accepted) {
    CHECK(client.tls_version() == negotiated);
  } else {
    CHECK(eventually([&] { return webhook.metric("gpuadmit_tls_handshake_failures_total") == 1; }));
  }
}

// A raw TCP client: what a port scanner or a plain-HTTP client does to the TLS port.
std::string plain_exchange(std::uint16_t port, const std::string& bytes) {
  namespace net = boost::asio;
  net::io_context ioc;
  net::ip::tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  if (!bytes.empty()) net::write(socket, net::buffer(bytes));
  std::string received(1024, '\0');
  boost::system::error_code ec;
  const std::size_t n = net::read(socket, net::buffer(received), ec);
  received.resize(n);
  return ec.message();
}

TEST_CASE("plain HTTP on the TLS port is a handshake failure and the server keeps serving") {
  TestWebhook webhook;
  plain_exchange(webhook.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(eventually([&] { return webhook.metric("gpuadmit_tls_handshake_failures_total") == 1; }));
  auto reply = webhook.client().request("GET", "/healthz");
  REQUIRE(reply);
  CHECK(reply->status == 200);
}

server::ConnectionLimits short_deadlines() {
  server::ConnectionLimits limits;
  limits.handshake_timeout = 1s;
  limits.first_request_timeout = 1s;
  limits.header_timeout = 1s;
  limits.body_timeout = 1s;
  limits.write_timeout = 1s;
  limits.idle_timeout = 3s;
  return limits;
}

TEST_CASE("a client that stalls is cut off by the deadline of the step it stalls in") {
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits = short_deadlines(); }});
  auto [description, bytes] = GENERATE(table<std::string, std::string>({
      {"mid-body",
       "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
       "Content-Length: 1000\r\n\r\n{\"apiVersion\":"},
      {"mid-header", "POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: appl"},
  }));
  INFO(description);
  HttpsClient client = webhook.client();
  REQUIRE(client.connect());
  REQUIRE(client.write_raw(bytes));
  const auto start = std::chrono::steady_clock::now();
  const auto closed = client.wait_for_close(5s);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(closed);  // an error here means the connection was still open after 5 s
  CHECK(elapsed >= 900ms);
  CHECK(elapsed < 4s);
}

TEST_CASE("a client that never starts its TLS handshake is cut off by the handshake deadline") {
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits = short_deadlines(); }});
  const auto start = std::chrono::steady_clock::now();
  plain_exchange(webhook.port(), "");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 900ms);
  CHECK(elapsed < 4s);
}

TEST_CASE("a connection that sends nothing after its handshake is closed by the first-request deadline") {
  // first request 1 s, idle 3 s: a client that never asks is holding one of max_connections' slots.
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits = short_deadlines(); }});
  HttpsClient client = webhook.client();
  REQUIRE(client.connect());
  const auto start = std::chrono::steady_clock::now();
  CHECK(client.wait_for_close(5s));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 900ms);
  CHECK(elapsed < 2500ms);
}

TEST_CASE("an idle keep-alive connection outlives the request deadlines") {
  // idle 3 s, header and body 1 s: waiting between requests is not reading a request.
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits = short_deadlines(); }});
  HttpsClient client = webhook.client();
  REQUIRE(client.request("GET", "/healthz"));
  std::this_thread::sleep_for(1500ms);  // the behaviour under test is a timeout, not a synchronisation
  auto reply = client.request("GET", "/healthz");
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(client.connections_made() == 1);
}

TEST_CASE("at the cap, a new connection takes the slot of the oldest one that has never been answered") {
  // Two clients that connect and say nothing (hostile, or broken) hold both slots; a third, as the API
  // server opening a connection, must still get in. The one served meanwhile is never the one closed.
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits.max_connections = 3; }});
  HttpsClient served = webhook.client();
  REQUIRE(served.request("GET", "/healthz"));
  HttpsClient oldest = webhook.client();
  HttpsClient younger = webhook.client();
  REQUIRE(oldest.connect());
  REQUIRE(younger.connect());
  REQUIRE(eventually([&] { return webhook.metric("gpuadmit_http_connections_open") == 3; }));

  HttpsClient newcomer = webhook.client();
  takes_slot_of(newcomer, oldest, served);
  CHECK(webhook.metric("gpuadmit_http_connections_evicted_total") == 1);
  CHECK(webhook.metric("gpuadmit_http_connections_rejected_total") == 0);
}

TEST_CASE("at the cap with every connection answered, the least recently active idle one makes room") {
  // A pod that opens connections and asks GET /healthz once on each holds answered slots: the API server's
  // new connection must still get in (#47). The connection used since is kept.
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits.max_connections = 2; }});
  HttpsClient first = webhook.client();
  HttpsClient second = webhook.client();
  REQUIRE(first.request("GET", "/healthz"));
  REQUIRE(second.request("GET", "/healthz"));
  REQUIRE(all_written(webhook));
  REQUIRE(first.request("GET", "/healthz"));  // second is now the least recently active
  REQUIRE(all_written(webhook));

  HttpsClient newcomer = webhook.client();
  takes_slot_of(newcomer, second, first);
  CHECK(webhook.metric("gpuadmit_http_connections_evicted_total") == 1);
  CHECK(webhook.metric("gpuadmit_http_connections_rejected_total") == 0);
}

TEST_CASE("at the cap, the client holding the most connections gives up one of its own") {
  // Loopback answers on every 127.0.0.0/8 address: three clients by source address. The hog's connections
  // were used more recently than the other client's one, which is kept all the same, also when it has just
  // been opened and not yet asked anything (the API server's new connection while a hog reconnects).
  const bool answered = GENERATE(true, false);
  CAPTURE(answered);
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.server.limits.max_connections = 3; }});
  const auto from = [&](const char* address) {
    ClientOptions options;
    options.source_address = address;
    return webhook.client(options);
  };
  HttpsClient api_server = from("127.0.0.2");
  REQUIRE((answered ? static_cast<bool>(api_server.request("GET", "/healthz"))
                    : static_cast<bool>(api_server.connect())));
  HttpsClient hog_a = from("127.0.0.3");
  HttpsClient hog_b = from("127.0.0.3");
  REQUIRE(all_written(webhook));
  REQUIRE(hog_a.request("GET", "/healthz"));
  REQUIRE(all_written(webhook));
  REQUIRE(hog_b.request("GET", "/healthz"));
  REQUIRE(all_written(webhook));

  HttpsClient newcomer = from("127.0.0.4");
  takes_slot_of(newcomer, hog_a, api_server);
  CHECK(webhook.metric("gpuadmit_http_connections_rejected_total") == 0);
}

}  // namespace
}  // namespace gpuadmit::test
