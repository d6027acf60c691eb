#include <catch2/catch.hpp>

#include <ctime>
#include <deque>

#include "gpuadmit/server/certificate_renewer.hpp"
#include "support/base64.hpp"

using gpuadmit::Result;
using gpuadmit::server::CertificateSecret;
using gpuadmit::server::PemPair;
using gpuadmit::server::RenewalOutcome;
using nlohmann::json;

namespace {

// A 30-day serving certificate and its CA, as the chart's Secret holds them.
json renewable_secret() {
  static const json secret = [] {
    auto ca = gpuadmit::server::generate_ca({"gpuadmit-ca", 3650});
    REQUIRE(ca.ok());
    auto serving = gpuadmit::server::generate_serving_certificate(*ca, {{"gpuadmit.svc"}, {}, 30, {}, false});
    REQUIRE(serving.ok());
    return json{{"metadata", {{"resourceVersion", "7"}}},
                {"data",
                 {{"ca.crt", gpuadmit::test::base64_encode(ca->certificate)},
                  {"ca.key", gpuadmit::test::base64_encode(ca->private_key)},
                  {"tls.crt", gpuadmit::test::base64_encode(serving->certificate)},
                  {"tls.key", gpuadmit::test::base64_encode(serving->private_key)}}}};
  }();
  return secret;
}

// The Secret as the API server would answer: scripted GET and PATCH results, patches recorded.
class ScriptedSecret final : public CertificateSecret {
 public:
  std::deque<Result<json>> gets;
  std::deque<Result<Written>> patches;
  std::vector<json> written;

  Result<json> get(std::stop_token /*stop*/) override {
    if (gets.empty()) return gpuadmit::make_error("no GET was expected");
    Result<json> next = gets.front();
    gets.pop_front();
    return next;
  }
  Result<Written> merge_patch(const json& patch, std::stop_token /*stop*/) override {
    written.push_back(patch);
    if (patches.empty()) return gpuadmit::make_error("no PATCH was expected");
    Result<Written> next = patches.front();
    patches.pop_front();
    return next;
  }
  [[nodiscard]] std::string name() const override { return "gpuadmit/gpuadmit-tls"; }
};

constexpr std::int64_t kDay = 86400;

}  // namespace

TEST_CASE("the renewer looks again when the certificate becomes due, and at least every 10 minutes",
          "[certificate-renewal]") {
  const json issued = renewable_secret();  // first: the 30-day certificate is issued now
  const std::int64_t now = std::time(nullptr);
  // seconds from now, renew_before in days, the bounds of the wait before the next look in seconds
  auto [later, renew_before_days, wait_at_least, wait_at_most] =
      GENERATE(table<std::int64_t, int, long long, long long>({
          {0, 7, 600, 600},                // due in 23 days: every 10 minutes all the same
          {23 * kDay - 300, 7, 270, 300},  // due in five minutes: then
          {23 * kDay - 5, 7, 10, 10},      // due in seconds: not sooner than the shortest wait
          {0, 29, 600, 600},               // due tomorrow: every 10 minutes
      }));
  CAPTURE(later, renew_before_days);
  ScriptedSecret secret;
  secret.gets.emplace_back(issued);
  const auto step =
      gpuadmit::server::renew_once(secret, now + later, {std::chrono::hours(24 * renew_before_days)});
  CHECK(step.outcome == RenewalOutcome::kNotDue);
  CHECK(step.next_look.count() >= wait_at_least);
  CHECK(step.next_look.count() <= wait_at_most);
  CHECK(secret.written.empty());
}

TEST_CASE("a due certificate is renewed in the Secret and served, and a writer that lost the race waits",
          "[certificate-renewal]") {
  const std::int64_t due = std::time(nullptr) + 25 * kDay;  // 5 days left, renew_before 7
  // the PATCH's result, the outcome, whether a pair is handed over to serve
  auto [patched, outcome, serves] = GENERATE(table<CertificateSecret::Written, RenewalOutcome, bool>({
      {CertificateSecret::Written::kPatched, RenewalOutcome::kRenewed, true},
      {CertificateSecret::Written::kConflict, RenewalOutcome::kConflict, false},
  }));
  ScriptedSecret secret;
  secret.gets.emplace_back(renewable_secret());
  secret.patches.emplace_back(patched);
  const auto step = gpuadmit::server::renew_once(secret, due, {std::chrono::hours(24 * 7)});
  CHECK(step.outcome == outcome);
  CHECK(step.renewal.has_value() == serves);
  REQUIRE(secret.written.size() == 1);
  CHECK(secret.written[0]["metadata"]["resourceVersion"] == "7");
  CHECK(step.next_look == gpuadmit::server::kShortestLook);  // the next look finds the renewed Secret
}

TEST_CASE("a renewal that cannot be made is reported with the Secret's name and retried later",
          "[certificate-renewal]") {
  const std::int64_t due = std::time(nullptr) + 25 * kDay;
  json no_key = renewable_secret();
  no_key["data"].erase("ca.key");
  // name, the GET's result, the PATCH's result (if one is sent), the start of the error
  auto [name, got, patch, error] =
      GENERATE_COPY(table<std::string, Result<json>, Result<CertificateSecret::Written>, std::string>({
          {"the API server cannot be reached", gpuadmit::make_error("connection refused"),
           CertificateSecret::Written::kPatched, "GET gpuadmit/gpuadmit-tls: connection refused"},
          {"no CA key", no_key, CertificateSecret::Written::kPatched,
           "gpuadmit/gpuadmit-tls: the Secret has no ca.key"},
          {"the PATCH is forbidden", renewable_secret(), gpuadmit::make_error("403 Forbidden"),
           "PATCH gpuadmit/gpuadmit-tls: 403 Forbidden"},
      }));
  INFO(name);
  ScriptedSecret secret;
  secret.gets.push_back(got);
  secret.patches.push_back(patch);
  const auto step = gpuadmit::server::renew_once(secret, due, {std::chrono::hours(24 * 7)});
  CHECK(step.outcome == RenewalOutcome::kFailed);
  CHECK_THAT(step.error, Catch::StartsWith(error));
  CHECK(step.next_look == gpuadmit::server::kRetryAfterFailure);
}
