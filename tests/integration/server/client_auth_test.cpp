// Who may call the webhook (#22 item 10): --client-ca-file over real TLS, and /metrics on a port of its own.
#include <catch2/catch.hpp>

#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

// A client certificate (clientAuth) signed by `ca`, as the API server's admission kubeconfig would hold.
server::PemPair client_certificate(const server::PemPair& ca) {
  server::ServingSpec spec{{"kube-apiserver"}, {}, 30, {}, true};
  auto pair = server::generate_serving_certificate(ca, spec);
  REQUIRE(pair.ok());
  return *pair;
}

server::PemPair new_ca(const std::string& name) {
  auto ca = server::generate_ca(server::CaSpec{name, 30});
  REQUIRE(ca.ok());
  return *ca;
}

std::string review_body() {
  return admission_review(fixture_pod("good-gpu-pod"), "uid-auth");
}

}  // namespace

TEST_CASE("with a client CA, a review needs a client certificate from it; probes and metrics do not") {
  // Made once: the table below is built on the first of the runs GENERATE makes, and keeps these.
  static const server::PemPair callers = new_ca("api-server-clients");
  static const server::PemPair presented = client_certificate(callers);
  static const server::PemPair foreign = client_certificate(new_ca("someone-else"));
  TestWebhook webhook(TestWebhookOptions{{}, {}, {}, callers.certificate, false});

  // who, client certificate, target, method, the status (0: the TLS handshake fails)
  auto [who, cert, target, method, status] =
      GENERATE_COPY(table<std::string, server::PemPair, std::string, std::string, int>({
          {"the API server's certificate gets a review", presented, "/validate", "POST", 200},
          {"... on /mutate too", presented, "/mutate", "POST", 200},
          {"no certificate gets 401", server::PemPair{}, "/validate", "POST", 401},
          {"no certificate gets 401 on /mutate", server::PemPair{}, "/mutate", "POST", 401},
          {"a certificate from another CA fails the handshake", foreign, "/validate", "POST", 0},
          {"a probe without a certificate is answered", server::PemPair{}, "/readyz", "GET", 200},
          {"so is /healthz", server::PemPair{}, "/healthz", "GET", 200},
          {"and /metrics, without --metrics-listen", server::PemPair{}, "/metrics", "GET", 200},
      }));
  INFO(who);
  ClientOptions options;
  options.client_certificate_pem = cert.certificate;
  options.client_key_pem = cert.private_key;
  HttpsClient client = webhook.client(options);
  auto reply = client.request(method, target, method == "POST" ? review_body() : std::string());
  if (status == 0) {
    REQUIRE_FALSE(reply.ok());
    return;
  }
  INFO((reply.ok() ? std::string() : reply.error().message));
  REQUIRE(reply.ok());
  CHECK(reply->status == status);
  if (status == 401) CHECK_THAT(reply->body, Catch::Contains("client certificate from its --client-ca-file"));
  if (target == "/validate" && status == 200) CHECK_THAT(reply->body, Catch::Contains(R"("uid":"uid-auth")"));
}

TEST_CASE("without a client CA, a caller presenting a certificate is reviewed as any other") {
  TestWebhook webhook;
  const server::PemPair cert = client_certificate(new_ca("unused"));
  ClientOptions options;
  options.client_certificate_pem = cert.certificate;
  options.client_key_pem = cert.private_key;
  auto reply = webhook.client(options).request("POST", "/validate", review_body());
  REQUIRE(reply.ok());
  CHECK(reply->status == 200);
}

TEST_CASE("with --metrics-listen, /metrics is on its own port, open to a caller without a certificate") {
  const server::PemPair callers = new_ca("api-server-clients");
  TestWebhook webhook(TestWebhookOptions{{}, {}, {}, callers.certificate, true});
  REQUIRE(webhook.metrics_port() != 0);
  REQUIRE(webhook.metrics_port() != webhook.port());
  ClientOptions options;
  options.ca_pem = webhook.certificates().ca.certificate;
  // A certificate from another CA would fail a handshake that asked for one: this port never asks.
  const server::PemPair foreign = client_certificate(new_ca("prometheus"));
  options.client_certificate_pem = foreign.certificate;
  options.client_key_pem = foreign.private_key;
  HttpsClient metrics("127.0.0.1", webhook.metrics_port(), options);
  auto scraped = metrics.request("GET", "/metrics");
  REQUIRE(scraped.ok());
  CHECK(scraped->status == 200);
  CHECK_THAT(scraped->body, Catch::Contains("gpuadmit_build_info"));
  auto ready = metrics.request("GET", "/readyz");
  REQUIRE(ready.ok());
  CHECK(ready->status == 200);
  auto review = metrics.request("POST", "/validate", review_body());
  REQUIRE(review.ok());
  CHECK(review->status == 404);  // reviews are the main port's

  auto main_port = webhook.client().request("GET", "/metrics");
  REQUIRE(main_port.ok());
  CHECK(main_port->status == 404);
}

TEST_CASE(
    "the client CA file is re-read with the serving certificate; an unreadable one is refused at start") {
  SECTION("a CA file without a certificate is a start-up error") {
    CHECK_THROWS_WITH(TestWebhook(TestWebhookOptions{{}, {}, {}, "not a certificate", false}),
                      Catch::Contains("the client CA file holds no PEM certificate"));
  }
}

}  // namespace gpuadmit::test
