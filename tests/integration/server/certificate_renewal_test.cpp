// serve --renew-secret on a serving webhook (#22 item 1): a due certificate is renewed in the Secret and
// served from the next handshake while load continues, with no request failing; a replica that loses the
// race to write it (409) keeps serving what it has.
#include <catch2/catch.hpp>

#include <mutex>
#include <utility>

#include "gpuadmit/server/serve_renewal.hpp"
#include "load.hpp"
#include "support/base64.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

// The Secret as the API server keeps it: a resourceVersion that every write moves, and 409 for a write
// that names an older one.
struct StoredSecret {
  std::mutex mutex;
  json object;
  int version = 1;
  bool race_once = false;  // another replica's renewal lands between this one's GET and PATCH
};

class SharedSecret final : public server::CertificateSecret {
 public:
  explicit SharedSecret(StoredSecret& stored) : stored_(stored) {}
  Result<json> get(std::stop_token /*stop*/) override {
    const std::lock_guard lock(stored_.mutex);
    json copy = stored_.object;
    copy["metadata"]["resourceVersion"] = std::to_string(stored_.version);
    return copy;
  }
  Result<Written> merge_patch(const json& patch, std::stop_token /*stop*/) override {
    const std::lock_guard lock(stored_.mutex);
    if (std::exchange(stored_.race_once, false)) ++stored_.version;
    if (patch["metadata"]["resourceVersion"] != std::to_string(stored_.version)) return Written::kConflict;
    stored_.object["data"].update(patch["data"]);
    ++stored_.version;
    return Written::kPatched;
  }
  [[nodiscard]] std::string name() const override { return "gpuadmit/gpuadmit-tls"; }

 private:
  StoredSecret& stored_;
};

std::string served_serial(const TestWebhook& webhook) {
  HttpsClient client = webhook.client();
  REQUIRE(client.connect());
  return client.peer_certificate_serial();
}

std::string stored_serial(StoredSecret& stored) {
  const std::lock_guard lock(stored.mutex);
  return server::certificate_serial(base64_decode(stored.object["data"]["tls.crt"].get<std::string>()));
}

// The chart's Secret for the webhook's own CA and serving certificate.
json chart_secret(const TestCertificates& certificates) {
  return {{"metadata", {{"name", "gpuadmit-tls"}}},
          {"data",
           {{"ca.crt", base64_encode(certificates.ca.certificate)},
            {"ca.key", base64_encode(certificates.ca.private_key)},
            {"tls.crt", base64_encode(certificates.serving.certificate)},
            {"tls.key", base64_encode(certificates.serving.private_key)}}}};
}

// A clock ten minutes before the webhook's (one-day) certificate expires: with renew_before 1h, it is due.
server::Clock near_expiry(const TestCertificates& certificates) {
  const auto not_after = server::certificate_not_after(certificates.serving.certificate);
  REQUIRE(not_after);
  return [at = *not_after - 600] { return at; };
}

// The renewal loop on `webhook`, over `stored`, with renew_before 1h and the clock near expiry.
std::unique_ptr<server::RenewalLoop> start_renewal_near_expiry(TestWebhook& webhook, StoredSecret& stored) {
  server::RenewalSetup setup;
  setup.make = [&](const server::JsonLog&) -> Result<std::unique_ptr<server::CertificateSecret>> {
    return std::unique_ptr<server::CertificateSecret>(std::make_unique<SharedSecret>(stored));
  };
  setup.policy.renew_before = 1h;
  setup.now = near_expiry(webhook.certificates());
  auto loop = server::start_renewal(setup, webhook.webhook(), server::JsonLog::discard());
  REQUIRE(loop.ok());
  return std::move(*loop);
}

void keep_load_running(const Load& load, std::uint64_t more) {
  const std::uint64_t target = load.completed() + more;
  REQUIRE(eventually([&] { return load.completed() >= target; }, 20s));
}

}  // namespace

TEST_CASE("a certificate near expiry is renewed in the Secret and served at once, with no review failing",
          "[certificate-renewal]") {
  TestWebhook webhook;
  const std::string first = served_serial(webhook);
  StoredSecret stored;
  stored.object = chart_secret(webhook.certificates());
  Load load([&] { return webhook.client(); },
            {.connections = 3,
             .requests_per_connection = 5,
             .body = admission_review(fixture_pod("good-gpu-pod"), "uid-renewal")});
  keep_load_running(load, 50);

  auto loop = start_renewal_near_expiry(webhook, stored);

  // The first look is at once; the renewed certificate is in the Secret and on the next handshake.
  REQUIRE(eventually([&] { return stored_serial(stored) != first; }, 10s));
  REQUIRE(eventually([&] { return served_serial(webhook) == stored_serial(stored); }, 10s));
  loop.reset();  // the moved clock finds each renewed certificate due again 10 s later
  const std::string renewed_serial = stored_serial(stored);
  // The files still hold the old pair: the poller must not put it back while they are unchanged...
  CHECK(webhook.webhook().check_files_now().tls.status == server::ReloadStatus::kUnchanged);
  CHECK(served_serial(webhook) == renewed_serial);
  // ...and when the kubelet writes the renewed Secret into the mount, the same pair is served.
  webhook.write_certificate({base64_decode(stored.object["data"]["tls.crt"].get<std::string>()),
                             base64_decode(stored.object["data"]["tls.key"].get<std::string>())});
  CHECK(webhook.webhook().check_files_now().tls.status == server::ReloadStatus::kReloaded);
  CHECK(served_serial(webhook) == renewed_serial);
  keep_load_running(load, 50);
  load.stop();
  CHECK(load.failures().empty());
  for (const std::string& failure : load.failures()) UNSCOPED_INFO(failure);
  CHECK(webhook.metric(R"(gpuadmit_certificate_renewals_total{result="renewed"})") >= 1);
  CHECK(webhook.metric(R"(gpuadmit_certificate_renewals_total{result="failure"})") == 0);
  const auto renewed =
      server::certificate_not_after(base64_decode(stored.object["data"]["tls.crt"].get<std::string>()));
  REQUIRE(renewed);
  // As Prometheus reads it (the gauge is rendered per scrape, outside Metrics).
  auto scrape = webhook.client().request("GET", "/metrics", "");
  REQUIRE(scrape);
  CHECK_THAT(scrape->body, Catch::Contains("\ngpuadmit_certificate_expiry_timestamp_seconds " +
                                           std::to_string(*renewed) + "\n"));
}

TEST_CASE("a replica that loses the race to renew keeps serving its certificate and counts a conflict",
          "[certificate-renewal]") {
  TestWebhook webhook;
  const std::string first = served_serial(webhook);
  StoredSecret stored;
  stored.object = chart_secret(webhook.certificates());
  stored.race_once = true;
  auto loop = start_renewal_near_expiry(webhook, stored);
  REQUIRE(eventually(
      [&] { return webhook.metric(R"(gpuadmit_certificate_renewals_total{result="conflict"})") == 1; }, 10s));
  loop.reset();
  CHECK(served_serial(webhook) == first);
  CHECK(stored_serial(stored) == first);
  CHECK(webhook.metric(R"(gpuadmit_certificate_renewals_total{result="renewed"})") == 0);
}

}  // namespace gpuadmit::test
