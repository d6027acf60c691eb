#include "gpuadmit/server/certificate_renewal.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>
#include <string_view>

#include "gpuadmit/tls/openssl_handles.hpp"

namespace gpuadmit::server {
namespace {

using nlohmann::json;

// Secret data is base64 of the file; OpenSSL's block decoder keeps the padding's zero bytes, which are cut.
Result<std::string> decoded(const json& data, const char* key) {
  const auto it = data.find(key);
  if (it == data.end() || !it->is_string()) return make_error(std::string("the Secret has no ") + key);
  const std::string& text = it->get_ref<const std::string&>();
  if (text.empty() || text.size() % 4 != 0) return make_error(std::string(key) + " is not base64");
  std::string out(text.size() / 4 * 3, '\0');
  const int n =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return make_error(std::string(key) + " is not base64");
  std::size_t size = static_cast<std::size_t>(n);
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

}  // namespace

Result<std::optional<Renewal>> renewal_of(const json& secret, std::int64_t now_seconds,
                                          const RenewalPolicy& policy) {
  if (!secret.is_object() || !secret.contains("data") || !secret["data"].is_object())
    return make_error("the Secret has no data");
  const json& data = secret["data"];
  auto leaf = decoded(data, "tls.crt");
  if (!leaf) return leaf.error();
  auto not_after = certificate_not_after(*leaf);
  if (!not_after) return make_error("tls.crt: " + not_after.error().message);
  const auto renew_before = std::chrono::duration_cast<std::chrono::seconds>(policy.renew_before).count();
  if (*not_after - now_seconds > renew_before) return std::optional<Renewal>();

  auto ca_certificate = decoded(data, "ca.crt");
  if (!ca_certificate) return ca_certificate.error();
  auto ca_key = decoded(data, "ca.key");
  if (!ca_key) {
    return make_error(
        "the Secret has no ca.key, so the serving certificate cannot be renewed here (installs made before "
        "the "
        "chart kept the CA key: replace the certificate, see docs/cluster.md)");
  }
  if (!signed_by(*leaf, *ca_certificate)) return make_error("tls.crt was not signed by the Secret's ca.crt");
  auto spec = serving_spec_of(*leaf);
  if (!spec) return make_error("tls.crt: " + spec.error().message);
  auto serving = generate_serving_certificate(PemPair{*ca_certificate, *ca_key}, *spec);
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
