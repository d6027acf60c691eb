// Certificate and policy reloads while clients keep sending reviews: not one request may fail.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "gpuadmit/config/policy_loader.hpp"
#include "load.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using namespace std::chrono_literals;
using server::ReloadStatus;

// Waits until the load has made `more` further requests: proof that traffic flowed across an event.
void let_load_run(const Load& load, std::uint64_t more) {
  const std::uint64_t target = load.completed() + more;
  REQUIRE(eventually([&] { return load.completed() >= target; }, 20s));
}

std::string fresh_handshake_serial(const TestWebhook& webhook) {
  HttpsClient client = webhook.client();
  REQUIRE(client.connect());
  return client.peer_certificate_serial();
}

TEST_CASE("a rotated certificate is served to new handshakes while load continues without failures") {
  TestWebhook webhook;
  const std::string first_serial = server::certificate_serial(webhook.certificates().serving.certificate);
  REQUIRE(fresh_handshake_serial(webhook) == first_serial);

  Load load([&] { return webhook.client(); },
            {.connections = 3,
             .requests_per_connection = 5,
             .body = admission_review(fixture_pod("good-gpu-pod"), "uid-load")});
  let_load_run(load, 50);

  const server::PemPair next = webhook.rotate_certificate();
  const server::FileChecks checks = webhook.webhook().check_files_now();
  CHECK(checks.tls.status == ReloadStatus::kReloaded);
  CHECK(fresh_handshake_serial(webhook) == server::certificate_serial(next.certificate));
  let_load_run(load, 50);

  SECTION("an invalid pair is refused and the last good one stays") {
    const server::PemPair other = make_serving(webhook.certificates().ca);
    webhook.write_certificate({next.certificate, other.private_key});  // key of another certificate
    CHECK(webhook.webhook().check_files_now().tls.status == ReloadStatus::kFailed);
    // Unchanged files are not retried (and not logged again) on the next poll.
    CHECK(webhook.webhook().check_files_now().tls.status == ReloadStatus::kUnchanged);
    CHECK(fresh_handshake_serial(webhook) == server::certificate_serial(next.certificate));
    CHECK(webhook.metric(R"(gpuadmit_tls_certificate_reloads_total{result="failure"})") == 1);
    let_load_run(load, 50);
  }

  load.stop();
  CHECK(load.failures().empty());
  for (const std::string& failure : load.failures()) UNSCOPED_INFO(failure);
  CHECK(webhook.metric(R"(gpuadmit_tls_certificate_reloads_total{result="success"})") == 1);
}

TEST_CASE("the serving certificate's expiry is exported, and follows a rotation") {
  TestWebhook webhook;
  // As Prometheus reads it: the sample on GET /metrics (0 when absent).
  const auto expiry = [&] {
    HttpsClient client = webhook.client();
    auto reply = client.request("GET", "/metrics", "");
    REQUIRE(reply);
    const std::string name = "\ngpuadmit_certificate_expiry_timestamp_seconds ";
    const std::size_t at = reply->body.find(name);
    return at == std::string::npos ? 0.0 : std::stod(reply->body.substr(at + name.size()));
  };
  const auto first = server::certificate_not_after(webhook.certificates().serving.certificate);
  REQUIRE(first);
  CHECK(expiry() == static_cast<double>(*first));
  CHECK(expiry() > static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count()));

  const server::PemPair next = webhook.rotate_certificate();
  REQUIRE(webhook.webhook().check_files_now().tls.status == ReloadStatus::kReloaded);
  const auto second = server::certificate_not_after(next.certificate);
  REQUIRE(second);
  CHECK(expiry() == static_cast<double>(*second));
}

TEST_CASE("the watcher picks up a changed certificate without a signal") {
  TestWebhook webhook({.configure = [](server::WebhookConfig& c) { c.reload_interval = 50ms; }});
  const server::PemPair next = webhook.rotate_certificate();
  CHECK(eventually(
      [&] { return webhook.metric(R"(gpuadmit_tls_certificate_reloads_total{result="success"})") == 1; }));
  CHECK(fresh_handshake_serial(webhook) == server::certificate_serial(next.certificate));
}

constexpr std::string_view kPolicyQosOff = R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
metadata:
  name: test
spec:
  rules:
    guaranteed-qos:
      action: off
    gpu-tolerations:
      action: off
    shm-size:
      action: off
)";

constexpr std::string_view kPolicyInvalid = R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
metadata:
  name: test
spec:
  rules:
    guaranteed-qos:
      action: sometimes
)";

TEST_CASE("a policy reload under load swaps valid policies in and keeps the old one on an invalid file") {
  TestWebhook webhook({.policy_yaml = std::string(config::default_policy_yaml())});
  const std::string burstable = admission_review(fixture_pod("vit-b-burstable"), "uid-policy");
  const auto allowed = [&] {
    auto reply = webhook.client().request("POST", "/validate", burstable);
    REQUIRE(reply);
    REQUIRE(reply->status == 200);
    return nlohmann::json::parse(reply->body)["response"]["allowed"].get<bool>();
  };
  CHECK_FALSE(allowed());  // the default policy enforces guaranteed-qos, shm-size and gpu-tolerations

  Load load([&] { return webhook.client(); },
            {.connections = 3, .requests_per_connection = 20, .body = burstable});
  let_load_run(load, 50);

  webhook.write_policy(std::string(kPolicyQosOff));
  CHECK(webhook.webhook().check_files_now().policy.status == ReloadStatus::kReloaded);
  CHECK(allowed());
  let_load_run(load, 50);

  webhook.write_policy(std::string(kPolicyInvalid));
  const server::FileChecks checks = webhook.webhook().check_files_now();
  CHECK(checks.policy.status == ReloadStatus::kFailed);
  // The loader's error names the file, line and column.
  CHECK_THAT(checks.policy.error, Catch::Contains(webhook.policy_path().string() + ":8:"));
  CHECK(allowed());  // still the last valid policy
  // For as long as the file holds the refused version, not only when it changed (the alert's series).
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 1);
  CHECK(webhook.webhook().check_files_now().policy.status == ReloadStatus::kUnchanged);
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 1);
  let_load_run(load, 50);

  load.stop();
  for (const std::string& failure : load.failures()) UNSCOPED_INFO(failure);
  CHECK(load.failures().empty());
  webhook.write_policy(std::string(kPolicyQosOff) + "\n");
  CHECK(webhook.webhook().check_files_now().policy.status == ReloadStatus::kReloaded);
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 0);
  CHECK(webhook.metric(R"(gpuadmit_policy_reloads_total{result="success"})") == 2);
  CHECK(webhook.metric(R"(gpuadmit_policy_reloads_total{result="failure"})") == 1);
}

// A restart while the mounted policy is invalid (#47 item 5): the replica neither crash-loops nor serves a
// policy it was not given. It stays live, refuses readiness with the loader's error (the Deployment's other
// replicas keep serving), answers a review that reaches it anyway with 500 (never an allow), and is ready
// as soon as the file is fixed.
TEST_CASE("a webhook started on an invalid policy is live, not ready, and ready once it is fixed") {
  TestWebhook webhook({.policy_yaml = std::string(kPolicyInvalid)});
  HttpsClient client = webhook.client();
  const auto status_of = [&](const std::string& method, const std::string& path, const std::string& body) {
    auto reply = client.request(method, path, body);
    REQUIRE(reply);
    return *reply;
  };
  CHECK(status_of("GET", "/healthz", "").status == 200);
  const auto not_ready = status_of("GET", "/readyz", "");
  CHECK(not_ready.status == 503);
  CHECK_THAT(not_ready.body, Catch::Contains(webhook.policy_path().string() + ":8:"));
  const std::string burstable = admission_review(fixture_pod("vit-b-burstable"), "uid-unready");
  const auto refused = status_of("POST", "/validate", burstable);
  CHECK(refused.status == 500);
  CHECK_THAT(refused.body, Catch::Contains("no valid policy"));
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 1);
  CHECK(webhook.webhook().check_files_now().policy.status == ReloadStatus::kUnchanged);
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 1);

  webhook.write_policy(std::string(kPolicyQosOff));
  CHECK(webhook.webhook().check_files_now().policy.status == ReloadStatus::kReloaded);
  CHECK(webhook.metric("gpuadmit_policy_file_rejected") == 0);
  CHECK(status_of("GET", "/readyz", "").status == 200);
  const auto judged = status_of("POST", "/validate", burstable);
  REQUIRE(judged.status == 200);
  CHECK(nlohmann::json::parse(judged.body)["response"]["allowed"].get<bool>());
}

}  // namespace
}  // namespace gpuadmit::test
