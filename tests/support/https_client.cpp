#include "https_client.hpp"

#include <optional>

#include <openssl/bn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace gpuadmit::test {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

Error failure(std::string_view what, const boost::system::error_code& ec) {
  return make_error(std::string(what) + ": " + ec.message());
}

}  // namespace

struct HttpsClient::Impl {
  Impl(std::string host_in, std::uint16_t port_in, ClientOptions options_in)
      : host(std::move(host_in)),
        port(port_in),
        options(std::move(options_in)),
        context(ssl::context::tls_client) {
    if (options.min_tls_version != 0)
      SSL_CTX_set_min_proto_version(context.native_handle(), options.min_tls_version);
    if (options.max_tls_version != 0)
      SSL_CTX_set_max_proto_version(context.native_handle(), options.max_tls_version);
    if (!options.cipher_list.empty())
      SSL_CTX_set_cipher_list(context.native_handle(), options.cipher_list.c_str());
    if (!options.ca_pem.empty()) {
      context.add_certificate_authority(net::buffer(options.ca_pem));
      context.set_verify_mode(ssl::verify_peer);
    }
    if (!options.client_certificate_pem.empty()) {
      context.use_certificate_chain(net::buffer(options.client_certificate_pem));
      context.use_private_key(net::buffer(options.client_key_pem), ssl::context::pem);
    }
  }

  // Runs the io_context until the started operation completes; the stream's deadline bounds it.
  void run() {
    ioc.restart();
    ioc.run();
  }

  template <typename Operation>
  boost::system::error_code run_op(Operation&& operation) {
    boost::system::error_code result = net::error::would_block;
    beast::get_lowest_layer(*stream).expires_after(options.timeout);
    std::forward<Operation>(operation)([&result](boost::system::error_code ec, auto&&...) { result = ec; });
    run();
    return result;
  }

  std::string host;
  std::uint16_t port;
  ClientOptions options;
  net::io_context ioc;
  ssl::context context;
  std::optional<beast::ssl_stream<beast::tcp_stream>> stream;
  beast::flat_buffer buffer;
  std::size_t connections = 0;
};

HttpsClient::HttpsClient(std::string host, std::uint16_t port, ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(host), port, std::move(options))) {}
HttpsClient::HttpsClient(HttpsClient&&) noexcept = default;
HttpsClient& HttpsClient::operator=(HttpsClient&&) noexcept = default;
HttpsClient::~HttpsClient() = default;

Done HttpsClient::connect() {
  close();
  Impl& s = *impl_;
  s.stream.emplace(s.ioc, s.context);
  s.buffer.clear();
  // Beast reads into the room the buffer has, and the parser takes every byte, so the buffer never grows:
  // a reply larger than its first 512 bytes would take a read per 512 (the load bench would then count the
  // client's cost against the endpoints with larger replies). One TLS record's plaintext fits.
  s.buffer.reserve(std::size_t{16} * 1024);
  SSL* native = s.stream->native_handle();
  // SSL_set_tlsext_host_name is a macro with a C cast; this is what it expands to.
  SSL_ctrl(native, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, s.options.server_name.data());
  if (!s.options.ca_pem.empty()) SSL_set1_host(native, s.options.server_name.c_str());
  boost::system::error_code ec;
  const tcp::endpoint endpoint(net::ip::make_address(s.host, ec), s.port);
  if (ec) return failure("address", ec);
  if (!s.options.source_address.empty()) {
    auto& socket = beast::get_lowest_layer(*s.stream).socket();
    const tcp::endpoint source(net::ip::make_address(s.options.source_address, ec), 0);
    if (ec) return failure("source address", ec);
    if (socket.open(source.protocol(), ec); ec) return failure("open", ec);
    if (socket.bind(source, ec); ec) return failure("bind", ec);
  }
  ec = s.run_op([&](auto handler) { beast::get_lowest_layer(*s.stream).async_connect(endpoint, handler); });
  if (ec) return failure("connect", ec);
  ++s.connections;
  beast::get_lowest_layer(*s.stream).socket().set_option(tcp::no_delay(true), ec);
  ec = s.run_op([&](auto handler) { s.stream->async_handshake(ssl::stream_base::client, handler); });
  if (ec) {
    s.stream.reset();
    return failure("handshake", ec);
  }
  return std::monostate{};
}

bool HttpsClient::connected() const {
  return impl_->stream.has_value();
}

void HttpsClient::close() {
  if (!impl_->stream) return;
  boost::system::error_code ignored;
  beast::get_lowest_layer(*impl_->stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  beast::get_lowest_layer(*impl_->stream).close();
  impl_->stream.reset();
}

Done HttpsClient::write_raw(std::string_view bytes) {
  if (!impl_->stream) return make_error("not connected");
  Impl& s = *impl_;
  const auto ec = s.run_op(
      [&](auto handler) { net::async_write(*s.stream, net::buffer(bytes.data(), bytes.size()), handler); });
  if (ec) return failure("write", ec);
  return std::monostate{};
}

Result<HttpReply> HttpsClient::read_reply() {
  if (!impl_->stream) return make_error("not connected");
  Impl& s = *impl_;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64U << 20U);
  const auto ec = s.run_op([&](auto handler) { http::async_read(*s.stream, s.buffer, parser, handler); });
  if (ec) {
    close();
    return failure("read", ec);
  }
  auto message = parser.release();
  HttpReply reply;
  reply.status = static_cast<int>(message.result_int());
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    reply.headers[name] = std::string(field.value());
  }
  reply.body = std::move(message.body());
  reply.keep_alive = message.keep_alive();
  if (!reply.keep_alive) close();
  return reply;
}

Result<HttpReply> HttpsClient::request(std::string_view method, std::string_view target,
                                       std::string_view body, std::string_view content_type) {
  if (!impl_->stream) {
    if (auto connected = connect(); !connected) return connected.error();
  }
  Impl& s = *impl_;
  http::request<http::string_body> message;
  message.method_string(method);
  message.target(target);
  message.version(11);
  message.set(http::field::host, s.options.server_name);
  message.set(http::field::user_agent, "gpuadmit-test");
  if (!body.empty() || method == "POST") {
    if (!content_type.empty()) message.set(http::field::content_type, content_type);
    message.body() = std::string(body);
  }
  message.prepare_payload();
  const auto ec = s.run_op([&](auto handler) { http::async_write(*s.stream, message, handler); });
  if (ec) {
    close();
    return failure("write", ec);
  }
  return read_reply();
}

Result<std::string> HttpsClient::wait_for_close(std::chrono::milliseconds timeout) {
  if (!impl_->stream) return make_error("not connected");
  Impl& s = *impl_;
  const auto saved = s.options.timeout;
  s.options.timeout = timeout;
  std::array<char, 4096> chunk{};
  boost::system::error_code ec;
  while (!ec) {
    ec = s.run_op([&](auto handler) { s.stream->async_read_some(net::buffer(chunk), handler); });
  }
  s.options.timeout = saved;
  close();
  if (ec == beast::error::timeout) return make_error("still open after the timeout");
  return ec.message();
}

std::string HttpsClient::peer_certificate_serial() const {
  if (!impl_->stream) return {};
  X509* certificate = SSL_get0_peer_certificate(impl_->stream->native_handle());
  if (certificate == nullptr) return {};
  BIGNUM* serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nullptr);
  char* hex = serial != nullptr ? BN_bn2hex(serial) : nullptr;
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(serial);
  return out;
}

std::string HttpsClient::tls_version() const {
  return impl_->stream ? SSL_get_version(impl_->stream->native_handle()) : std::string();
}

std::size_t HttpsClient::connections_made() const {
  return impl_->connections;
}

}  // namespace gpuadmit::test
