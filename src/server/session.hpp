// One client connection: TLS handshake, then HTTP/1.1 requests until either side closes. Runs on its own
// strand; every step arms the stream's deadline first (Beast's advanced_server_flex pattern).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <boost/beast/ssl/ssl_stream.hpp>
#include "gpuadmit/server/request_body.hpp"

#include "gpuadmit/server/http_message.hpp"
#include "gpuadmit/server/request_body.hpp"
#include "server_state.hpp"

namespace gpuadmit::server {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket&& socket, std::shared_ptr<boost::asio::ssl::context> tls,
          ServerState& state);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session();

  void start();
  // Closes the connection if it is waiting for a next request; a request already arriving is answered.
  // Thread-safe.
  void close_if_idle();
  // Closes the connection, whatever it is doing (to make room for a new one: see the listener). Thread-safe.
  void evict();

 private:
  using ErrorCode = boost::system::error_code;

  void on_handshake(ErrorCode ec);
  void wait_for_request();
  void on_first_bytes(ErrorCode ec, std::size_t bytes);
  void read_header();
  void on_header(ErrorCode ec, std::size_t bytes);
  void on_body(ErrorCode ec, std::size_t bytes);
  void handle_request();
  // The router's answer; whatever a handler throws becomes a 500 (runs on any thread).
  Response route(const Request& request) const;
  void respond(Response response, bool keep_alive);
  void on_write(bool keep_alive, ErrorCode ec, std::size_t bytes);
  void shut_down();
  void linger();
  void discard_until_closed();
  void end_request();

  // Holds the context this connection was accepted with; a certificate reload does not touch it.
  std::shared_ptr<boost::asio::ssl::context> tls_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  ServerState& state_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<RequestBody>> parser_;
  boost::beast::http::response<boost::beast::http::string_body> response_;
  std::string peer_;    // address:port, for logs
  std::string client_;  // address alone: the connections of one client share it
  std::uint64_t id_ = 0;
  bool registered_ = false;
  bool idle_ = false;   // waiting for the first byte of a next request
  bool asked_ = false;  // a request has begun on this connection (first_request_timeout no longer applies)
  bool in_flight_ = false;  // a request was read and is not answered yet
  bool client_certificate_ =
      false;  // the client presented a verified certificate (Request::client_certificate)
};

}  // namespace gpuadmit::server
