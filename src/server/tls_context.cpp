#include "gpuadmit/server/tls_context.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "file_contents.hpp"
#include "gpuadmit/tls/openssl_error.hpp"
#include "gpuadmit/tls/openssl_handles.hpp"

namespace gpuadmit::server {
namespace {

using tls::BioPtr;
using tls::serial_hex;

namespace ssl = boost::asio::ssl;

// Go's crypto/tls client defaults (what the apiserver uses): ECDHE only, AES-GCM or ChaCha20-Poly1305.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
constexpr const char* kTls13Suites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
constexpr const char* kGroups = "X25519:P-256:P-384";

// Both files in one string, so "changed" means either changed.
std::string seen_key(const std::string& certificate, const std::string& key) {
  return std::to_string(certificate.size()) + ":" + certificate + key;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_server_context(std::string_view certificate_chain_pem,
                                                          std::string_view private_key_pem) {
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return make_error(tls::drain_openssl_errors("cannot set the minimum TLS version"));
  }
  // No compression (CRIME); no renegotiation (a cheap CPU exhaustion lever); our cipher order, not theirs.
  SSL_CTX_set_options(native,
                      SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1 ||
      SSL_CTX_set_ciphersuites(native, kTls13Suites) != 1 || SSL_CTX_set1_groups_list(native, kGroups) != 1) {
    return make_error(tls::drain_openssl_errors("cannot configure ciphers"));
  }
  boost::system::error_code ec;
  context->use_certificate_chain(
      boost::asio::buffer(certificate_chain_pem.data(), certificate_chain_pem.size()), ec);
  if (ec) return make_error(tls::drain_openssl_errors("cannot use the certificate: " + ec.message()));
  context->use_private_key(boost::asio::buffer(private_key_pem.data(), private_key_pem.size()),
                           ssl::context::pem, ec);
  if (ec) return make_error(tls::drain_openssl_errors("cannot use the private key: " + ec.message()));
  if (SSL_CTX_check_private_key(native) != 1) {
    return make_error(tls::drain_openssl_errors("the private key does not match the certificate"));
  }
  return context;
}

std::string describe_certificate(ssl::context& context) {
  X509* leaf = SSL_CTX_get0_certificate(context.native_handle());
  if (leaf == nullptr) return "no certificate";
  std::string out = "serial=" + serial_hex(leaf);
  const BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio && ASN1_TIME_print(bio.get(), X509_get0_notAfter(leaf)) == 1) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int): OpenSSL's type
    out += " notAfter=" + std::string(data, static_cast<std::size_t>(size));
  }
  return out;
}

std::optional<std::int64_t> certificate_not_after(ssl::context& context) {
  const X509* leaf = SSL_CTX_get0_certificate(context.native_handle());
  if (leaf == nullptr) return std::nullopt;
  return tls::not_after_seconds(leaf);
}

Result<std::unique_ptr<TlsContextStore>> TlsContextStore::open(TlsFiles files) {
  auto certificate = read_file(files.certificate);
  if (!certificate) return certificate.error();
  auto key = read_file(files.private_key);
  if (!key) return key.error();
  auto context = make_server_context(*certificate, *key);
  if (!context) {
    return make_error(files.certificate.string() + " / " + files.private_key.string() + ": " +
                      context.error().message);
  }
  return std::unique_ptr<TlsContextStore>(
      new TlsContextStore(std::move(files), seen_key(*certificate, *key), std::move(*context)));
}

TlsContextStore::TlsContextStore(TlsFiles files, std::string seen, std::shared_ptr<ssl::context> context)
    : files_(std::move(files)), last_seen_(std::move(seen)), current_(std::move(context)) {}

std::shared_ptr<ssl::context> TlsContextStore::current() const {
  return current_.load();
}

ReloadReport TlsContextStore::reload_if_changed() {
  const std::lock_guard lock(reload_mutex_);
  auto certificate = read_file(files_.certificate);
  auto key = certificate ? read_file(files_.private_key) : Result<std::string>(certificate.error());
  if (!certificate || !key) {
    const std::string error = (!certificate ? certificate : key).error().message;
    const std::string marker = std::string(1, '\0') + error;
    if (marker == last_seen_) return {};
    last_seen_ = marker;
    return {ReloadStatus::kFailed, error, {}};
  }
  std::string seen = seen_key(*certificate, *key);
  if (seen == last_seen_) return {};
  last_seen_ = std::move(seen);
  auto context = make_server_context(*certificate, *key);
  if (!context) return {ReloadStatus::kFailed, context.error().message, {}};
  std::string detail = describe_certificate(**context);
  current_.store(std::move(*context));
  return {ReloadStatus::kReloaded, {}, std::move(detail)};
}

}  // namespace gpuadmit::server
