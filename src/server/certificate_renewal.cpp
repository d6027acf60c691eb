#include "gpuadmit/server/certificate_renewal.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <ctime>
#include <string>
#include <string_view>

#include "gpuadmit/common/duration.hpp"
#include "gpuadmit/tls/openssl_handles.hpp"

namespace gpuadmit::server {
namespace {

using nlohmann::json;

// Secret data is base64 of the file; OpenSSL's block decoder keeps the padding's zero bytes, which are cut.
Result<std::string> decoded(const json& data, const char* key) {
  const auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return make_error(std::string("the Secret has no ") + key);
  const auto& text = it->get_ref<const std::string&>();
  if (text.empty() || text.size() % 4 != 0) return make_error(std::string(key) + " is not base64");
  std::string out(text.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return make_error(std::string(key) + " is not base64");
  auto size = static_cast<std::size_t>(n);
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) --size;
  out.resize(size);
  return out;
}

std::string encoded(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

tls::X509Ptr certificate(std::string_view pem) {
  const tls::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return tls::X509Ptr(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// Whether `ca_pem` signed `leaf_pem`: renewing from another CA would break every webhook's caBundle.
bool signed_by(std::string_view leaf_pem, std::string_view ca_pem) {
  const tls::X509Ptr leaf = certificate(leaf_pem);
  const tls::X509Ptr ca = certificate(ca_pem);
  if (!leaf || !ca) return false;
  EVP_PKEY* key = X509_get0_pubkey(ca.get());
  return key != nullptr && X509_verify(leaf.get(), key) == 1;
}

// Whether `key_pem` is the private key of `certificate_pem`: a certificate signed with another key would
// verify against no caBundle, and be written to the Secret for every replica and restart to serve.
bool key_of(std::string_view certificate_pem, std::string_view key_pem) {
  const tls::X509Ptr ca = certificate(certificate_pem);
  const tls::BioPtr bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  const tls::EvpPkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  return ca && key && X509_check_private_key(ca.get(), key.get()) == 1;
}

std::size_t certificate_count(std::string_view pem) {
  std::size_t count = 0;
  for (std::size_t at = pem.find("-----BEGIN CERTIFICATE-----"); at != std::string_view::npos;
       at = pem.find("-----BEGIN CERTIFICATE-----", at + 1))
    ++count;
  return count;
}

// On every look, not only when the certificate is due: the failure (and its alert) then comes renew_before
// ahead of the CA's expiry, while there is time to replace it.
Result<bool> ca_outlasts(const json& data, std::int64_t now_seconds, const RenewalPolicy& policy) {
  auto ca_certificate = decoded(data, "ca.crt");
  if (!ca_certificate) return ca_certificate.error();
  auto not_after = certificate_not_after(*ca_certificate);
  if (!not_after) return make_error("ca.crt: " + not_after.error().message);
  if (*not_after - now_seconds > policy.renew_before.count()) return true;
  const std::time_t at = *not_after;
  std::tm tm{};
  gmtime_r(&at, &tm);
  std::array<char, 32> day{};
  const std::size_t n = std::strftime(day.data(), day.size(), "%Y-%m-%d", &tm);
  return make_error("ca.crt expires on " + std::string(day.data(), n) +
                    ", within renew-before: a renewed certificate would outlive the CA that every webhook's "
                    "caBundle trusts; replace the CA (docs/cluster.md, \"The CA\")");
}

// The Secret's serving certificate, the spec it was made for, and when it is due.
struct Leaf {
  std::string pem;
  ServingSpec spec;
  std::int64_t due_at = 0;
};

Result<Leaf> leaf_of(const json& secret, const RenewalPolicy& policy) {
  if (!secret.is_object() || !secret.contains("data") || !secret["data"].is_object())
    return make_error("the Secret has no data");
  auto pem = decoded(secret["data"], "tls.crt");
  if (!pem) return pem.error();
  if (const std::size_t count = certificate_count(*pem); count > 1) {
    return make_error("tls.crt holds a chain of " + std::to_string(count) +
                      " certificates: renewal writes a leaf signed directly by ca.crt, so renew this Secret "
                      "some other way (cert-manager)");
  }
  auto not_after = certificate_not_after(*pem);
  if (!not_after) return make_error("tls.crt: " + not_after.error().message);
  auto spec = serving_spec_of(*pem);
  if (!spec) return make_error("tls.crt: " + spec.error().message);
  const std::int64_t lifetime = std::int64_t{spec->days} * 86'400;
  if (policy.renew_before.count() >= lifetime) {
    return make_error("renew-before (" + format_duration(policy.renew_before) +
                      ") is not shorter than the certificate's lifetime (" + std::to_string(spec->days) +
                      (spec->days == 1 ? " day" : " days") +
                      "): each renewal would be due at once; give a shorter --renew-before (the chart's "
                      "certificates.helm.renew.before)");
  }
  return Leaf{std::move(*pem), std::move(*spec), *not_after - policy.renew_before.count()};
}

}  // namespace

Result<std::int64_t> renewal_due_at(const json& secret, const RenewalPolicy& policy) {
  auto leaf = leaf_of(secret, policy);
  if (!leaf) return leaf.error();
  return leaf->due_at;
}

Result<std::optional<Renewal>> renewal_of(const json& secret, std::int64_t now_seconds,
                                          const RenewalPolicy& policy) {
  auto leaf = leaf_of(secret, policy);
  if (!leaf) return leaf.error();
  if (auto ca = ca_outlasts(secret["data"], now_seconds, policy); !ca) return ca.error();
  if (now_seconds < leaf->due_at) return std::optional<Renewal>();

  const json& data = secret["data"];
  auto ca_certificate = decoded(data, "ca.crt");
  if (!ca_certificate) return ca_certificate.error();
  auto ca_key = decoded(data, "ca.key");
  if (!ca_key) {
    return make_error(
        "the Secret has no ca.key, so the serving certificate cannot be renewed here (an install made before "
        "the chart kept the CA key: helm upgrade makes a new CA, see docs/cluster.md)");
  }
  if (!signed_by(leaf->pem, *ca_certificate)) {
    return make_error(
        "tls.crt was not signed by the Secret's ca.crt: the Secret was edited or half replaced; put back a "
        "matching pair, or replace the CA (docs/cluster.md, \"The CA\")");
  }
  if (!key_of(*ca_certificate, *ca_key)) {
    return make_error(
        "ca.key is not the key of ca.crt: a certificate signed with it would verify against no caBundle; put "
        "back the CA's own key, or replace the CA (docs/cluster.md, \"The CA\")");
  }
  auto serving = generate_serving_certificate(PemPair{*ca_certificate, *ca_key}, leaf->spec);
  if (!serving) return serving.error();
  auto renewed_not_after = certificate_not_after(serving->certificate);
  if (!renewed_not_after) return renewed_not_after.error();

  json patch = {
      {"data", {{"tls.crt", encoded(serving->certificate)}, {"tls.key", encoded(serving->private_key)}}}};
  if (secret.contains("metadata") && secret["metadata"].contains("resourceVersion"))
    patch["metadata"] = {{"resourceVersion", secret["metadata"]["resourceVersion"]}};
  return std::optional<Renewal>(Renewal{std::move(patch), std::move(*serving), *renewed_not_after});
}

}  // namespace gpuadmit::server
