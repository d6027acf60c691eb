#include <catch2/catch.hpp>

#include <ctime>

#include <openssl/evp.h>

#include "gpuadmit/server/certificate_renewal.hpp"

using gpuadmit::server::PemPair;
using nlohmann::json;

namespace {

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string unbase64(const std::string& text) {
  std::string out(text.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  std::size_t size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

PemPair ca(const std::string& name) {
  auto made = gpuadmit::server::generate_ca({name, 3650});
  REQUIRE(made.ok());
  return *made;
}

json secret_of(const PemPair& signer, const PemPair& serving, bool with_key = true) {
  json data = {{"ca.crt", base64(signer.certificate)},
               {"tls.crt", base64(serving.certificate)},
               {"tls.key", base64(serving.private_key)}};
  if (with_key) data["ca.key"] = base64(signer.private_key);
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
  // renew_before, in days, and whether a renewal is due for the 30-day certificate
  auto [renew_before_days, due] =
      GENERATE(table<int, bool>({{7, false}, {29, false}, {31, true}, {400, true}}));
  CAPTURE(renew_before_days);
  const auto renewal =
      gpuadmit::server::renewal_of(secret, now, {std::chrono::hours(24 * renew_before_days)});
  REQUIRE(renewal.ok());
  REQUIRE(renewal->has_value() == due);
  if (!due) return;
  const gpuadmit::server::Renewal& r = **renewal;
  CHECK(r.patch["metadata"]["resourceVersion"] == "41");  // optimistic: a concurrent renewal gets 409
  CHECK(unbase64(r.patch["data"]["tls.crt"]) == r.serving.certificate);
  CHECK(unbase64(r.patch["data"]["tls.key"]) == r.serving.private_key);
  CHECK_FALSE(r.patch["data"].contains("ca.crt"));  // the CA, and so every caBundle, stays
  auto spec = gpuadmit::server::serving_spec_of(r.serving.certificate);
  REQUIRE(spec.ok());
  CHECK(spec->dns_names == kSpec.dns_names);
  CHECK(spec->ip_addresses == kSpec.ip_addresses);
  CHECK(spec->days == kSpec.days);  // not a day longer at each renewal (notBefore is backdated)
  CHECK(r.not_after > now + 29 * 86400);
  CHECK(gpuadmit::server::certificate_serial(r.serving.certificate) !=
        gpuadmit::server::certificate_serial(serving->certificate));
}

TEST_CASE("a Secret gpuadmit cannot renew from says what is missing", "[certificate-renewal]") {
  const PemPair signer = ca("gpuadmit-ca");
  auto serving = gpuadmit::server::generate_serving_certificate(signer, kSpec);
  REQUIRE(serving.ok());
  const PemPair other = ca("another-ca");
  // name, the Secret, the start of the error
  auto [name, secret, error] = GENERATE_COPY(table<std::string, json, std::string>({
      {"no CA key (installed before the chart kept it)", secret_of(signer, *serving, false),
       "the Secret has no ca.key"},
      {"a CA that did not sign the certificate",
       secret_of(PemPair{other.certificate, other.private_key}, *serving),
       "tls.crt was not signed by the Secret's ca.crt"},
      {"no data", json{{"kind", "Secret"}}, "the Secret has no data"},
      {"not base64", json{{"data", {{"tls.crt", "***"}}}}, "tls.crt is not base64"},
  }));
  INFO(name);
  const auto renewal =
      gpuadmit::server::renewal_of(secret, std::time(nullptr), {std::chrono::hours(24 * 400)});
  REQUIRE_FALSE(renewal.ok());
  CHECK_THAT(renewal.error().message, Catch::StartsWith(error));
}
