#include "session.hpp"

#include <algorithm>
#include <exception>

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace gpuadmit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

constexpr std::size_t kFirstReadSize = 4096;
// The most a body read asks for at once: one TLS record's plaintext. Beast reads into what the buffer has
// room for, and the buffer never grows on its own (the parser takes every byte into the body), so without
// this a 15 KB review took four reads of 4 KB, each a round through OpenSSL and Asio's composed operations.
constexpr std::size_t kBodyReadSize = std::size_t{16} * 1024;
// A connection that completes its handshake after the drain period gets this long to send its request.
constexpr Milliseconds kStoppingIdleTimeout{1'000};
// How long a closing connection keeps reading (and discarding) what the client still sends.
constexpr Milliseconds kLingerTimeout{2'000};

// The peer went away between requests or mid-handshake: normal life of a keep-alive connection, not an error.
// stream_truncated is a TLS peer closing TCP without close_notify (Beast's http_server_async_ssl explains).
bool is_disconnect(const boost::system::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::ssl::error::stream_truncated || ec == http::error::end_of_stream ||
         ec == net::error::broken_pipe;
}

}  // namespace

Session::Session(net::ip::tcp::socket&& socket, std::shared_ptr<net::ssl::context> tls, ServerState& state)
    : tls_(std::move(tls)), stream_(std::move(socket), *tls_), state_(state) {
  ErrorCode ec;
  const auto endpoint = beast::get_lowest_layer(stream_).socket().remote_endpoint(ec);
  if (!ec) {
    client_ = endpoint.address().to_string();
    peer_ = client_ + ":" + std::to_string(endpoint.port());
  }
  // Small responses on a keep-alive connection: Nagle would hold each one for the peer's delayed ACK.
  beast::get_lowest_layer(stream_).socket().set_option(net::ip::tcp::no_delay(true), ec);
}

Session::~Session() {
  if (in_flight_) state_.metrics.in_flight.add(-1);
  if (!registered_) return;
  state_.metrics.open_connections.add(-1);
  const std::size_t remaining = state_.sessions.remove(id_);
  if (remaining == 0 && state_.stopping.load() && state_.on_drained) state_.on_drained();
}

void Session::start() {
  id_ = state_.sessions.add(shared_from_this(), client_);
  registered_ = true;
  state_.metrics.open_connections.add(1);
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    beast::get_lowest_layer(self->stream_).expires_after(self->state_.limits.handshake_timeout);
    self->stream_.async_handshake(net::ssl::stream_base::server,
                                  beast::bind_front_handler(&Session::on_handshake, self));
  });
}

void Session::close_if_idle() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->idle_) beast::get_lowest_layer(self->stream_).cancel();
  });
}

void Session::evict() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    beast::get_lowest_layer(self->stream_).socket().close(ignored);
  });
}

void Session::on_handshake(ErrorCode ec) {
  if (ec) {
    state_.metrics.handshake_failures.inc();
    state_.tls_errors.warn("tls handshake failed", {{"peer", peer_}, {"error", ec.message()}});
    return;
  }
  // A certificate the client presented has been verified by the handshake (a bad one fails it); this records
  // that there was one, for the review handlers' 401.
  SSL* native = stream_.native_handle();
  client_certificate_ =
      SSL_get0_peer_certificate(native) != nullptr && SSL_get_verify_result(native) == X509_V_OK;
  wait_for_request();
}

// Idle is "no byte of the next request yet". Reading that first byte separately is what lets shutdown close
// idle connections without ever cutting a request that has started to arrive.
void Session::wait_for_request() {
  if (buffer_.size() > 0) return read_header();  // pipelined: the next request is already here
  idle_ = true;
  const Milliseconds idle = asked_
                                ? state_.limits.idle_timeout
                                : std::min(state_.limits.first_request_timeout, state_.limits.idle_timeout);
  beast::get_lowest_layer(stream_).expires_after(state_.stopping.load() ? std::min(kStoppingIdleTimeout, idle)
                                                                        : idle);
  stream_.async_read_some(buffer_.prepare(kFirstReadSize),
                          beast::bind_front_handler(&Session::on_first_bytes, shared_from_this()));
}

void Session::on_first_bytes(ErrorCode ec, std::size_t bytes) {
  idle_ = false;
  if (ec == net::error::operation_aborted) return shut_down();  // close_if_idle
  if (ec) return;  // idle timeout or the client closed: the socket is closed with this session
  asked_ = true;
  buffer_.commit(bytes);
  read_header();
}

void Session::read_header() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(state_.limits.header_limit));
  parser_->body_limit(state_.limits.body_limit);
  beast::get_lowest_layer(stream_).expires_after(state_.limits.header_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&Session::on_header, shared_from_this()));
}

void Session::on_header(ErrorCode ec, std::size_t /*bytes*/) {
  if (ec == http::error::header_limit) return respond(text_response(431, "request header too large"), false);
  // Beast checks Content-Length against body_limit as soon as it parses the field.
  if (ec == http::error::body_limit) return respond(text_response(413, "request body too large"), false);
  if (ec == beast::error::timeout) {
    state_.connection_errors.warn("request header deadline passed", {{"peer", peer_}});
    return;
  }
  if (ec) {
    if (is_disconnect(ec)) return;
    return respond(text_response(400, "bad request: " + ec.message()), false);
  }
  in_flight_ = true;
  state_.metrics.in_flight.add(1);
  if (parser_->is_done()) return handle_request();
  // Room for the rest of the body in one read, up to a TLS record; only connections that send a large body
  // keep the larger buffer.
  if (const auto remaining = parser_->content_length_remaining()) {
    buffer_.reserve(buffer_.size() + std::min<std::size_t>(*remaining, kBodyReadSize));
  }
  beast::get_lowest_layer(stream_).expires_after(state_.limits.body_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&Session::on_body, shared_from_this()));
}

void Session::on_body(ErrorCode ec, std::size_t /*bytes*/) {
  if (ec == http::error::body_limit) return respond(text_response(413, "request body too large"), false);
  if (ec == beast::error::timeout) {
    state_.connection_errors.warn("request body deadline passed", {{"peer", peer_}});
    return end_request();
  }
  if (ec) {
    if (is_disconnect(ec)) return end_request();
    return respond(text_response(400, "bad request: " + ec.message()), false);
  }
  handle_request();
}

void Session::handle_request() {
  state_.sessions.busy(id_);  // until on_write: closing it to make room would cut this answer
  auto message = parser_->release();
  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.content_type = std::string(message[http::field::content_type]);
  request.body = std::move(message.body());
  request.client_certificate = client_certificate_;
  const bool keep_alive = message.keep_alive() && !state_.draining.load();
  if (state_.review_pool == nullptr || state_.router.placement(request) == Placement::kIoThread)
    return respond(route(request), keep_alive);
  // A review runs on the review workers; its answer is written back on this connection's strand. Nothing
  // else touches the stream meanwhile: the connection is busy (never idle, never chosen to make room).
  net::post(*state_.review_pool, [self = shared_from_this(), request = std::move(request), keep_alive] {
    Response response = self->route(request);
    net::post(self->stream_.get_executor(), [self, response = std::move(response), keep_alive]() mutable {
      self->respond(std::move(response), keep_alive);
    });
  });
}

Response Session::route(const Request& request) const {
  // The session boundary: whatever a handler throws becomes a 500 on this request, never a dead process.
  try {
    return state_.router.route(request);
  } catch (const std::exception& e) {
    state_.log.error("handler failed", {{"target", request.target}, {"error", e.what()}});
  } catch (...) {
    state_.log.error("handler failed", {{"target", request.target}, {"error", "unknown exception"}});
  }
  return text_response(500, "internal error");
}

void Session::respond(Response response, bool keep_alive) {
  response_ = {};
  response_.version(11);
  response_.result(static_cast<unsigned>(response.status));
  response_.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) response_.set(name, value);
  response_.body() = std::move(response.body);
  response_.keep_alive(keep_alive);
  response_.prepare_payload();
  state_.metrics.record_response(response.status);
  beast::get_lowest_layer(stream_).expires_after(state_.limits.write_timeout);
  http::async_write(stream_, response_,
                    beast::bind_front_handler(&Session::on_write, shared_from_this(), keep_alive));
}

void Session::on_write(bool keep_alive, ErrorCode ec, std::size_t /*bytes*/) {
  state_.sessions.answered(id_);
  end_request();
  if (ec) return;
  if (!keep_alive) return shut_down();
  wait_for_request();
}

void Session::end_request() {
  if (!in_flight_) return;
  in_flight_ = false;
  state_.metrics.in_flight.add(-1);
}

// close_notify, then wait (bounded) for the peer's.
void Session::shut_down() {
  beast::get_lowest_layer(stream_).expires_after(state_.limits.write_timeout);
  stream_.async_shutdown([self = shared_from_this()](ErrorCode /*ec*/) { self->linger(); });
}

// Closing a socket with unread input makes the kernel send RST, and the client may then lose the response
// it has not read yet (a 413 while it is still sending its body). So: stop sending, discard what still
// arrives until the client closes or a short deadline passes, then close.
void Session::linger() {
  auto& tcp = beast::get_lowest_layer(stream_);
  ErrorCode ec;
  tcp.socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
  if (ec) return tcp.close();
  tcp.expires_after(std::min(kLingerTimeout, state_.limits.write_timeout));
  discard_until_closed();
}

void Session::discard_until_closed() {
  buffer_.clear();
  beast::get_lowest_layer(stream_).async_read_some(
      buffer_.prepare(kFirstReadSize), [self = shared_from_this()](ErrorCode ec, std::size_t /*bytes*/) {
        if (ec) return beast::get_lowest_layer(self->stream_).close();
        self->discard_until_closed();
      });
}

}  // namespace gpuadmit::server
