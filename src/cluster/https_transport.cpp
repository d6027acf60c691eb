// HTTPS/1.1 to the API server on Beast + OpenSSL. Each call runs its own io_context on the calling thread
// (a reflector thread), so the code reads top to bottom; every asynchronous step has a deadline, and a
// stop request posts a close of the socket, which ends whatever step is pending.
#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <mutex>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "body_sink.hpp"
#include "gpuadmit/cluster/exec_credential.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/text.hpp"
#include "gpuadmit/tls/openssl_error.hpp"
#include "gpuadmit/version.hpp"
#include "https_connection.hpp"

namespace gpuadmit::cluster {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using https::Connection;
using https::is_ip_literal;
using https::make_context;
using https::open_tunnel;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr std::size_t kChunkBytes = 64 * 1024;
constexpr std::size_t kMaxErrorBodyBytes = 1U << 20U;  // a Status object is small; keep a bounded prefix
constexpr std::size_t kMaxTokenBytes = 1U << 20U;

// A mounted file read whole, up to a byte more than kMaxTokenBytes (the caller refuses that); "" when it
// cannot be opened. The token and the CA are read this way before each request.
std::string read_mounted(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  std::array<char, 4096> chunk{};
  while (in && (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) && text.size() <= kMaxTokenBytes)
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  return text;
}

class HttpsTransport final : public ApiTransport {
 public:
  HttpsTransport(ApiConfig config, TransportLimits limits, std::shared_ptr<ssl::context> context)
      : config_(std::move(config)),
        limits_(limits),
        context_(std::move(context)),
        context_ca_(config_.ca_pem),
        verify_name_(config_.tls_server_name.empty() ? config_.host : config_.tls_server_name),
        host_header_(host_header(config_)),
        exec_(config_.exec ? std::make_shared<ExecCredentialCache>(*config_.exec) : nullptr) {}

  Result<ApiResponse> get(std::string_view target, std::stop_token stop) override {
    return exchange({http::verb::get, target, {}}, nullptr,
                    std::chrono::steady_clock::now() + limits_.response_timeout, stop);
  }

  Result<ApiResponse> watch(std::string_view target, std::chrono::seconds deadline,
                            const WatchCallbacks& callbacks, std::stop_token stop) override {
    return exchange({http::verb::get, target, {}}, &callbacks, std::chrono::steady_clock::now() + deadline,
                    stop);
  }

  Result<ApiResponse> merge_patch(std::string_view target, std::string_view patch,
                                  std::stop_token stop) override {
    return exchange({http::verb::patch, target, patch}, nullptr,
                    std::chrono::steady_clock::now() + limits_.response_timeout, stop);
  }

  Result<ApiResponse> write(WriteVerb verb, std::string_view target, std::string_view body,
                            std::stop_token stop) override {
    return exchange({http_verb(verb), target, body, verb == WriteVerb::kApply}, nullptr,
                    std::chrono::steady_clock::now() + limits_.response_timeout, stop);
  }

  [[nodiscard]] std::string endpoint() const override { return config_.url(); }

 private:
  static std::string host_header(const ApiConfig& config) {
    std::string host = config.bracketed_host();
    return config.port == 443 ? host : host + ":" + std::to_string(config.port);
  }

  // The token file is read for every request: requests are minutes apart (one watch per kind every
  // 5-10 minutes), so this is cheaper than any change detection, and a rotated token is picked up on the
  // next request. If the file is briefly unreadable (the kubelet swaps the mount), the last token is used.
  Result<std::string> bearer_token() const {
    if (config_.token_file.empty()) return config_.token;
    const std::string token(trim_space(read_mounted(config_.token_file)));
    const std::lock_guard lock(token_mutex_);
    if (!token.empty() && token.size() <= kMaxTokenBytes) {
      last_token_ = token;
      return token;
    }
    if (!last_token_.empty()) return last_token_;
    return make_error("cannot read the token file " + config_.token_file.string());
  }

  // The TLS context of the CA file's current content (ca_file), read before each connection like the token:
  // a cluster CA rotation writes both CAs into the file first, then the API server moves to the new one.
  // A file that is unreadable or holds no usable CA keeps the context in use.
  std::shared_ptr<ssl::context> current_context() const {
    const std::lock_guard lock(context_mutex_);
    if (config_.ca_file.empty()) return context_;
    std::string pem = read_mounted(config_.ca_file);
    if (pem.empty() || pem.size() > kMaxTokenBytes || pem == context_ca_) return context_;
    auto context = make_context(config_, pem);
    if (!context) return context_;
    context_ = std::move(*context);
    context_ca_ = std::move(pem);
    return context_;
  }

  // A credential plugin's client certificate (with the CA in use): a context of its own, made again only
  // when the plugin hands out another certificate or the CA file changes.
  Result<std::shared_ptr<ssl::context>> exec_context(const ExecCredential& credential) const {
    std::shared_ptr<ssl::context> base = current_context();
    if (credential.client_certificate_pem.empty()) return base;
    const std::lock_guard lock(context_mutex_);
    if (exec_context_ && exec_certificate_ == credential.client_certificate_pem && exec_ca_ == context_ca_)
      return exec_context_;
    ApiConfig with_certificate = config_;
    with_certificate.source = config_.exec->where;
    with_certificate.client_certificate_pem = credential.client_certificate_pem;
    with_certificate.client_key_pem = credential.client_key_pem;
    auto context = make_context(with_certificate, context_ca_);
    if (!context) return context.error();
    exec_context_ = std::move(*context);
    exec_certificate_ = credential.client_certificate_pem;
    exec_ca_ = context_ca_;
    return exec_context_;
  }

  Error failure(std::string_view step, const error_code& ec) const {
    return make_error(std::string(step) + " " + config_.url() + ": " + ec.message());
  }

  Result<bool> connect(Connection& c, const std::stop_token& stop) const {
    if (auto opened = open_tcp(c, stop); !opened) return opened;
    return handshake(c, stop);
  }

  // A TCP connection to the API server, or to the proxy and through its tunnel.
  Result<bool> open_tcp(Connection& c, const std::stop_token& stop) const {
    const auto connect_deadline = std::chrono::steady_clock::now() + limits_.connect_timeout;
    // The TCP peer: the proxy when there is one, else the API server.
    const std::string& peer_host = config_.proxy ? config_.proxy->host : config_.host;
    const std::uint16_t peer_port = config_.proxy ? config_.proxy->port : config_.port;
    tcp::resolver::results_type endpoints;
    error_code ec;
    const net::ip::address address = net::ip::make_address(peer_host, ec);
    if (!ec) {
      endpoints = tcp::resolver::results_type::create(tcp::endpoint(address, peer_port), peer_host,
                                                      std::to_string(peer_port));
    } else {
      // The resolver has no deadline of its own: a timer cancels it.
      net::steady_timer timer(c.ioc, connect_deadline);
      timer.async_wait([&c](error_code timer_ec) {
        if (!timer_ec) c.resolver.cancel();
      });
      ec = c.run([&](auto handler) {
        c.resolver.async_resolve(
            peer_host, std::to_string(peer_port),
            [&, handler](error_code resolve_ec, tcp::resolver::results_type results) mutable {
              timer.cancel();
              endpoints = std::move(results);
              handler(resolve_ec);
            });
      });
      if (stop.stop_requested()) return make_error("stopped");
      if (ec == net::error::operation_aborted) ec = net::error::timed_out;
      if (ec && config_.proxy)
        return make_error("resolve the proxy " + config_.proxy->url + ": " + ec.message());
      if (ec) return failure("resolve", ec);
    }
    beast::get_lowest_layer(c.stream).expires_at(connect_deadline);
    ec = c.run([&](auto handler) { beast::get_lowest_layer(c.stream).async_connect(endpoints, handler); });
    if (stop.stop_requested()) return make_error("stopped");
    if (ec) {
      if (config_.proxy)
        return make_error("connect to the proxy " + config_.proxy->url + ": " + ec.message());
      return failure("connect", ec);
    }
    beast::get_lowest_layer(c.stream).socket().set_option(tcp::no_delay(true), ec);
    if (config_.proxy) {
      auto tunnel =
          open_tunnel(c, *config_.proxy, config_.host, config_.port, limits_.handshake_timeout, stop);
      if (!tunnel) return tunnel;
    }
    return true;
  }

  // TLS with the API server: SNI and the name its certificate must carry.
  Result<bool> handshake(Connection& c, const std::stop_token& stop) const {
    SSL* native = c.stream.native_handle();
    const bool ip_name = is_ip_literal(verify_name_);
    if (!ip_name) {
      // SSL_set_tlsext_host_name is a macro with a C cast; this is what it expands to. No SNI for IP
      // literals (RFC 6066 §3), as Go does.
      SSL_ctrl(native, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(verify_name_.c_str()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
      if (SSL_set1_host(native, verify_name_.c_str()) != 1)
        return make_error(tls::drain_openssl_errors("SSL_set1_host"));
    } else if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), verify_name_.c_str()) != 1) {
      return make_error(tls::drain_openssl_errors("X509_VERIFY_PARAM_set1_ip_asc"));
    }
    beast::get_lowest_layer(c.stream).expires_after(limits_.handshake_timeout);
    const error_code ec =
        c.run([&](auto handler) { c.stream.async_handshake(ssl::stream_base::client, handler); });
    if (stop.stop_requested()) return make_error("stopped");
    if (ec) {
      const long verify = SSL_get_verify_result(native);  // NOLINT(google-runtime-int): OpenSSL's type
      if (verify != X509_V_OK) {
        return make_error("TLS handshake with " + config_.url() +
                          ": server certificate not trusted: " + X509_verify_cert_error_string(verify) +
                          " (checked against the CA of " + config_.source + ", name " + verify_name_ + ")");
      }
      return failure("TLS handshake with", ec);
    }
    return true;
  }

  static http::verb http_verb(WriteVerb verb) {
    static constexpr std::array<http::verb, 4> kVerbs{http::verb::post, http::verb::put, http::verb::patch,
                                                      http::verb::delete_};
    return kVerbs.at(static_cast<std::size_t>(verb));
  }

  // What one request sends: a GET or DELETE has no body, a PATCH a merge patch (or an apply), a POST or PUT
  // an object.
  struct Outgoing {
    http::verb verb;
    std::string_view target;
    std::string_view body;
    bool apply = false;
  };

  // A credential plugin's token or client certificate refused with 401 (revoked, or expired early) is
  // fetched again, once, as client-go does.
  Result<ApiResponse> exchange(const Outgoing& outgoing, const WatchCallbacks* watch_callbacks,
                               SteadyTime deadline, const std::stop_token& stop) const {
    ExecCredential sent;
    auto response = exchange_once(outgoing, watch_callbacks, deadline, stop, sent);
    if (!exec_ || !response || response->status != 401) return response;
    exec_->refused(sent);
    return exchange_once(outgoing, watch_callbacks, deadline, stop, sent);
  }

  // `sent`: the plugin's credential this request used (exec_ only).
  Result<ApiResponse> exchange_once(const Outgoing& outgoing, const WatchCallbacks* watch_callbacks,
                                    SteadyTime deadline, const std::stop_token& stop,
                                    ExecCredential& sent) const {
    std::string token;
    std::shared_ptr<ssl::context> context;
    if (exec_) {
      auto credential = exec_->credential();
      if (!credential) return credential.error();
      auto made = exec_context(*credential);
      if (!made) return made.error();
      context = std::move(*made);
      token = credential->token;
      sent = std::move(*credential);
    } else {
      auto read = bearer_token();
      if (!read) return read.error();
      token = std::move(*read);
      context = current_context();
    }
    Connection c(*context);
    // Declared after `c`, so it is gone before `c` is destroyed.
    const std::stop_callback on_stop(stop, [&c] { net::post(c.ioc, [&c] { c.abort(); }); });
    if (stop.stop_requested()) return make_error("stopped");
    if (auto connected = connect(c, stop); !connected) return connected.error();
    if (auto written = send_request(c, outgoing, token, stop); !written) return written.error();
    return read_response(c, watch_callbacks, deadline, stop);
  }

  Result<bool> send_request(Connection& c, const Outgoing& outgoing, const std::string& token,
                            const std::stop_token& stop) const {
    http::request<http::string_body> request{outgoing.verb,
                                             config_.path_prefix + std::string(outgoing.target), 11};
    request.set(http::field::host, host_header_);
    request.set(http::field::user_agent, "gpuadmit/" + std::string(kVersion));
    request.set(http::field::accept, "application/json");
    if (outgoing.verb == http::verb::patch || outgoing.verb == http::verb::post ||
        outgoing.verb == http::verb::put) {
      request.set(http::field::content_type, outgoing.verb != http::verb::patch ? "application/json"
                                             : outgoing.apply ? "application/apply-patch+yaml"
                                                              : "application/merge-patch+json");
      request.body() = std::string(outgoing.body);
      request.prepare_payload();
    }
    if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
    beast::get_lowest_layer(c.stream).expires_after(limits_.write_timeout);
    const error_code ec = c.run([&](auto handler) { http::async_write(c.stream, request, handler); });
    if (stop.stop_requested()) return make_error("stopped");
    if (ec) return failure("write to", ec);
    return true;
  }

  Result<ApiResponse> read_response(Connection& c, const WatchCallbacks* watch_callbacks, SteadyTime deadline,
                                    const std::stop_token& stop) const {
    // A get() has one deadline for the whole answer; a watch has its overall deadline and, per read, the
    // idle timeout (a silent stream is a dead peer, not a quiet cluster: the API server sends bookmarks).
    const auto arm = [&] {
      auto until = deadline;
      if (watch_callbacks != nullptr)
        until = std::min(until, std::chrono::steady_clock::now() + limits_.watch_idle_timeout);
      beast::get_lowest_layer(c.stream).expires_at(until);
    };
    http::response_parser<http::buffer_body> parser;
    parser.header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(limits_.max_header_bytes, UINT32_MAX)));
    parser.body_limit(boost::none);  // our own limits below: per line for watches, per body otherwise
    arm();
    error_code ec =
        c.run([&](auto handler) { http::async_read_header(c.stream, c.buffer, parser, handler); });
    if (stop.stop_requested()) return make_error("stopped");
    if (ec) return failure("read response header from", ec);

    ApiResponse response;
    response.status = static_cast<int>(parser.get().result_int());
    BodySink sink(response, watch_callbacks,
                  watch_callbacks != nullptr ? kMaxErrorBodyBytes : limits_.max_body_bytes,
                  limits_.max_line_bytes, config_.url());
    if (sink.streaming() && watch_callbacks->opened) watch_callbacks->opened();
    std::vector<char> chunk(kChunkBytes);
    while (!parser.is_done() && !sink.handler_stopped()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      arm();
      ec = c.run([&](auto handler) { http::async_read_some(c.stream, c.buffer, parser, handler); });
      if (ec == http::error::need_buffer) ec = {};
      const std::size_t received = chunk.size() - parser.get().body().size;
      if (received > 0) {
        if (auto ok = sink.consume(chunk.data(), received); !ok) return ok.error();
      }
      if (stop.stop_requested()) return make_error("stopped");
      if (ec == beast::error::timeout && watch_callbacks != nullptr &&
          std::chrono::steady_clock::now() < deadline) {
        return make_error("watch stream from " + config_.url() + ": no data for " +
                          std::to_string(limits_.watch_idle_timeout.count()) + " ms");
      }
      if (ec) return failure(sink.streaming() ? "watch stream from" : "read response body from", ec);
    }
    sink.finish();
    return response;
  }

  ApiConfig config_;
  TransportLimits limits_;
  mutable std::mutex context_mutex_;
  mutable std::shared_ptr<ssl::context> context_;  // guarded by context_mutex_; a connection keeps its own
  mutable std::string context_ca_;                 // the CA text context_ trusts; guarded by context_mutex_
  // A credential plugin's client certificate's context, that certificate and the CA text it trusts; guarded
  // by context_mutex_.
  mutable std::shared_ptr<ssl::context> exec_context_;
  mutable std::string exec_certificate_;
  mutable std::string exec_ca_;
  std::string verify_name_;
  std::string host_header_;
  mutable std::mutex token_mutex_;
  mutable std::string last_token_;             // guarded by token_mutex_
  std::shared_ptr<ExecCredentialCache> exec_;  // a credential plugin's, else null
};

}  // namespace

Result<std::shared_ptr<ApiTransport>> make_https_transport(ApiConfig config, TransportLimits limits) {
  if (config.host.empty()) return make_error(config.source + ": no API server host");
  if (config.ca_pem.empty() && !config.insecure_skip_tls_verify)
    return make_error(config.source + ": no CA to verify the API server with");
  auto context = make_context(config, config.ca_pem);
  if (!context) return context.error();
  return std::shared_ptr<ApiTransport>(
      std::make_shared<HttpsTransport>(std::move(config), limits, std::move(*context)));
}

}  // namespace gpuadmit::cluster
