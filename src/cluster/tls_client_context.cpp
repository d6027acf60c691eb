#include <openssl/err.h>
#include <openssl/ssl.h>

#include "gpuadmit/tls/openssl_error.hpp"
#include "https_connection.hpp"

namespace gpuadmit::cluster::https {

bool is_ip_literal(const std::string& host) {
  error_code ec;
  (void)net::ip::make_address(host, ec);
  return !ec;
}

Result<std::shared_ptr<ssl::context>> make_context(const ApiConfig& config, const std::string& ca_pem) {
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX* native = context->native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return make_error(tls::drain_openssl_errors("cannot set the minimum TLS version"));
  }
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  error_code ec;
  if (config.insecure_skip_tls_verify) {
    context->set_verify_mode(ssl::verify_none);  // the kubeconfig asked; the CLI has warned
  } else {
    context->add_certificate_authority(net::buffer(ca_pem), ec);
    if (ec)
      return make_error(
          tls::drain_openssl_errors(config.source + ": the CA is not a PEM certificate: " + ec.message()));
    context->set_verify_mode(ssl::verify_peer);
  }
  if (!config.client_certificate_pem.empty()) {
    context->use_certificate_chain(net::buffer(config.client_certificate_pem), ec);
    if (ec)
      return make_error(
          tls::drain_openssl_errors(config.source + ": cannot use the client certificate: " + ec.message()));
    context->use_private_key(net::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec)
      return make_error(
          tls::drain_openssl_errors(config.source + ": cannot use the client key: " + ec.message()));
    if (SSL_CTX_check_private_key(native) != 1) {
      return make_error(tls::drain_openssl_errors(config.source +
                                                  ": the client key does not match the client certificate"));
    }
  }
  return context;
}

}  // namespace gpuadmit::cluster::https
