#include <catch2/catch.hpp>

#include <ctime>

#include "gpuadmit/server/certificate_renewal.hpp"
#include "support/base64.hpp"

using gpuadmit::server::PemPair;
using nlohmann::json;

namespace {

PemPair ca(const std::string& name, int days = 3650) {
  auto made = gpuadmit::server::generate_ca({name, days});
  REQUIRE(made.ok());
  return *made;
}

json secret_of(const PemPair& signer, const PemPair& serving, bool with_key = true) {
  json data = {{"ca.crt", gpuadmit::test::base64_encode(signer.certificate)},
               {"tls.crt", gpuadmit::test::base64_encode(serving.certificate)},
               {"tls.key", gpuadmit::test::base64_encode(serving.private_key)}};
  if (with_key) data["ca.key"] = gpuadmit::test::base64_encode(signer.private_key);
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", "gpuadmit-tls"}, {"resourceVersion", "41"}}},
          {"data", data}};
}

const gpuadmit::server::ServingSpec kSpec{
    {"gpuadmit.gpuadmit.svc", "gpuadmit.gpuadmit.svc.cluster.local"}, {"127.0.0.1"}, 30, {}, false};

}  // namespace

TEST_CASE("a serving certificate near expiry is renewed from the CA beside it, for the same names",
          "[certificate-renewal]") {
  const PemPair signer = ca("gpuadmit-ca");
  auto serving = gpuadmit::server::generate_serving_certificate(signer, kSpec);
  REQUIRE(serving.ok());
  const json secret = secret_of(signer, *serving);
  const std::int64_t now = std::time(nullptr);
  constexpr std::int64_t kOneDay = 86400;
  // days since the 30-day certificate was issued, renew_before in days, and whether a renewal is due
  auto [days_later, renew_before_days, due] = GENERATE(table<int, int, bool>(
      {{0, 7, false}, {22, 7, false}, {24, 7, true}, {40, 7, true}, {0, 29, false}, {2, 29, true}}));
  CAPTURE(days_later, renew_before_days);
  const auto renewal = gpuadmit::server::renewal_of(secret, now + days_later * kOneDay,
                                                    {std::chrono::hours(24 * renew_before_days)});
  REQUIRE(renewal.ok());
  REQUIRE(renewal->has_value() == due);
  if (!due) return;
  const gpuadmit::server::Renewal& r = **renewal;
  CHECK(r.patch["metadata"]["resourceVersion"] == "41");  // optimistic: a concurrent renewal gets 409
  CHECK(gpuadmit::test::base64_decode(r.patch["data"]["tls.crt"].get<std::string>()) ==
        r.serving.certificate);
  CHECK(gpuadmit::test::base64_decode(r.patch["data"]["tls.key"].get<std::string>()) ==
        r.serving.private_key);
  CHECK_FALSE(r.patch["data"].contains("ca.crt"));  // the CA, and so every caBundle, stays
  auto spec = gpuadmit::server::serving_spec_of(r.serving.certificate);
  REQUIRE(spec.ok());
  CHECK(spec->dns_names == kSpec.dns_names);
  CHECK(spec->ip_addresses == kSpec.ip_addresses);
  CHECK(spec->days == kSpec.days);          // not a day longer at each renewal (notBefore is backdated)
  CHECK(r.not_after > now + 29 * kOneDay);  // from the real clock, whatever the due check was told
  CHECK(gpuadmit::server::certificate_serial(r.serving.certificate) !=
        gpuadmit::server::certificate_serial(serving->certificate));
}

TEST_CASE("a Secret gpuadmit cannot renew from says what is missing", "[certificate-renewal]") {
  const PemPair signer = ca("gpuadmit-ca");
  auto serving = gpuadmit::server::generate_serving_certificate(signer, kSpec);
  REQUIRE(serving.ok());
  const PemPair other = ca("another-ca");
  const PemPair short_lived = ca("short-lived-ca", 31);
  auto outlived = gpuadmit::server::generate_serving_certificate(short_lived, kSpec);
  REQUIRE(outlived.ok());
  const PemPair chain{serving->certificate + signer.certificate, serving->private_key};
  // name, the Secret, renew_before in days, the start of the error
  auto [name, secret, renew_before_days, error] = GENERATE_COPY(table<std::string, json, int, std::string>({
      {"no CA key (installed before the chart kept it)", secret_of(signer, *serving, false), 29,
       "the Secret has no ca.key"},
      {"a CA that did not sign the certificate",
       secret_of(PemPair{other.certificate, other.private_key}, *serving), 29,
       "tls.crt was not signed by the Secret's ca.crt"},
      {"no data", json{{"kind", "Secret"}}, 29, "the Secret has no data"},
      {"not base64", json{{"data", {{"tls.crt", "***"}}}}, 29, "tls.crt is not base64"},
      // Signed with a key that is not ca.crt's, the new certificate would verify against no caBundle.
      {"a CA key that is not the CA certificate's",
       secret_of(PemPair{signer.certificate, other.private_key}, *serving), 29,
       "ca.key is not the key of ca.crt"},
      // A renewal cannot outlive the CA: every review would fail once it expires, whatever tls.crt says.
      {"a CA that expires within renew-before", secret_of(short_lived, *outlived), 29, "ca.crt expires on "},
      // The renewal writes a leaf alone: a chain's intermediates would be lost.
      {"a chain in tls.crt", secret_of(signer, chain), 29, "tls.crt holds a chain of 2 certificates"},
      // Renewed for the same lifetime, it would be due again at once: a renewal at every check.
      {"renew-before as long as the certificate lives", secret_of(signer, *serving), 30,
       "renew-before (720h) is not shorter than the certificate's lifetime (30 days)"},
  }));
  INFO(name);
  const auto renewal = gpuadmit::server::renewal_of(secret, std::time(nullptr) + 29L * 86400,
                                                    {std::chrono::hours(24 * renew_before_days)});
  REQUIRE_FALSE(renewal.ok());
  CHECK_THAT(renewal.error().message, Catch::StartsWith(error));
}
