#include "gpuadmit/server/tls_context.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
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

// The files in one string, so "changed" means any changed.
std::string seen_key(const std::string& certificate, const std::string& key, const std::string& client_ca) {
  return std::to_string(certificate.size()) + ":" + std::to_string(key.size()) + ":" + certificate + key +
         client_ca;
}

// A fixed session id context: OpenSSL refuses to resume a session of a server that verifies peers without
// one.
constexpr unsigned char kSessionIdContext[] = "gpuadmit";

Result<bool> ask_for_client_certificates(boost::asio::ssl::context& context, std::string_view client_ca_pem) {
  SSL_CTX* native = context.native_handle();
  const BioPtr bio(BIO_new_mem_buf(client_ca_pem.data(), static_cast<int>(client_ca_pem.size())));
  if (!bio) return make_error(tls::drain_openssl_errors("cannot read the client CA"));
  X509_STORE* store = SSL_CTX_get_cert_store(native);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  int count = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    ++count;
    const bool added = X509_STORE_add_cert(store, ca) == 1 &&
                       sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca))) > 0;
    X509_free(ca);
    if (!added) {
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      return make_error(tls::drain_openssl_errors("cannot use the client CA"));
    }
  }
  ERR_clear_error();  // the read that ended the loop (no more PEM) is not an error
  if (count == 0) {
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    return make_error("the client CA file holds no PEM certificate");
  }
  SSL_CTX_set_client_CA_list(native, names);  // takes ownership: the names sent in the CertificateRequest
  SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_session_id_context(native, kSessionIdContext, sizeof(kSessionIdContext) - 1);
  return true;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_server_context(std::string_view certificate_chain_pem,
                                                          std::string_view private_key_pem,
                                                          std::string_view client_ca_pem) {
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
  if (!client_ca_pem.empty()) {
    if (auto asked = ask_for_client_certificates(*context, client_ca_pem); !asked) return asked.error();
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

Result<TlsContextStore::Contexts> TlsContextStore::contexts_of(std::string_view certificate,
                                                               std::string_view key,
                                                               const std::string& client_ca,
                                                               const std::string& source) const {
  auto open = make_server_context(certificate, key);
  if (!open) return make_error(source + ": " + open.error().message);
  if (!files_.client_ca) return Contexts{*open, *open};
  auto asking = make_server_context(certificate, key, client_ca);
  if (!asking) return make_error(files_.client_ca->string() + ": " + asking.error().message);
  return Contexts{std::move(*asking), std::move(*open)};
}

Result<TlsContextStore::Contexts> TlsContextStore::load(std::string& seen, std::string& client_ca) const {
  auto certificate = read_file(files_.certificate);
  if (!certificate) return certificate.error();
  auto key = read_file(files_.private_key);
  if (!key) return key.error();
  if (files_.client_ca) {
    auto read = read_file(*files_.client_ca);
    if (!read) return read.error();
    client_ca = std::move(*read);
  }
  seen = seen_key(*certificate, *key, client_ca);
  return contexts_of(*certificate, *key, client_ca,
                     files_.certificate.string() + " / " + files_.private_key.string());
}

Result<std::unique_ptr<TlsContextStore>> TlsContextStore::open(TlsFiles files) {
  auto store = std::unique_ptr<TlsContextStore>(new TlsContextStore(std::move(files)));
  std::string seen;
  auto contexts = store->load(seen, store->client_ca_);
  if (!contexts) return contexts.error();
  store->last_seen_ = std::move(seen);
  store->open_.store(std::move(contexts->open));
  store->current_.store(std::move(contexts->asking));
  return store;
}

TlsContextStore::TlsContextStore(TlsFiles files)
    : files_(std::move(files)), current_(nullptr), open_(nullptr) {}

ReloadReport TlsContextStore::install(const std::string& certificate, const std::string& private_key) {
  const std::lock_guard lock(reload_mutex_);
  auto contexts = contexts_of(certificate, private_key, client_ca_, "renewed certificate");
  if (!contexts) return {ReloadStatus::kFailed, contexts.error().message, {}};
  std::string detail = describe_certificate(*contexts->asking);
  open_.store(std::move(contexts->open));
  current_.store(std::move(contexts->asking));
  return {ReloadStatus::kReloaded, {}, std::move(detail)};
}

std::shared_ptr<ssl::context> TlsContextStore::current() const {
  return current_.load();
}

std::shared_ptr<ssl::context> TlsContextStore::current_without_client_auth() const {
  return open_.load();
}

ReloadReport TlsContextStore::reload_if_changed() {
  const std::lock_guard lock(reload_mutex_);
  std::string seen;
  std::string client_ca;
  auto contexts = load(seen, client_ca);
  if (!contexts && seen.empty()) {  // a file could not be read
    const std::string marker = std::string(1, '\0') + contexts.error().message;
    if (marker == last_seen_) return {};
    last_seen_ = marker;
    return {ReloadStatus::kFailed, contexts.error().message, {}};
  }
  if (seen == last_seen_) return {};
  last_seen_ = std::move(seen);
  if (!contexts) return {ReloadStatus::kFailed, contexts.error().message, {}};
  std::string detail = describe_certificate(*contexts->asking);
  if (files_.client_ca) detail += " clientCA=" + files_.client_ca->string();
  client_ca_ = std::move(client_ca);
  open_.store(std::move(contexts->open));
  current_.store(std::move(contexts->asking));
  return {ReloadStatus::kReloaded, {}, std::move(detail)};
}

}  // namespace gpuadmit::server
