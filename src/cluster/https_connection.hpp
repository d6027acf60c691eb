// One HTTPS request's connection to the API server, and what sets it up: the TLS client context of a
// configuration and, through a proxy, the CONNECT tunnel. Internal to the cluster library (Boost and
// OpenSSL stay out of its public headers).
#pragma once

#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster::https {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

// One request on one connection. Members are declared so that the io_context outlives everything bound
// to it.
struct Connection {
  explicit Connection(ssl::context& context) : stream(ioc, context) {}

  net::io_context ioc;
  tcp::resolver resolver{ioc};
  beast::ssl_stream<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  // Starts one asynchronous operation and runs the io_context until it (and anything posted) is done.
  template <typename Start>
  error_code run(Start&& start) {
    error_code result = net::error::would_block;
    std::forward<Start>(start)([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  void abort() {
    resolver.cancel();
    beast::get_lowest_layer(stream).close();
  }
};

// Whether `host` is an IPv4 or IPv6 literal (verified as an IP address, and sent no SNI).
bool is_ip_literal(const std::string& host);

// The TLS client context of `config`, trusting `ca_pem` (the CA file's current text, or the inline CA): TLS
// 1.2 or later, no compression or renegotiation, the client certificate if there is one.
Result<std::shared_ptr<ssl::context>> make_context(const ApiConfig& config, const std::string& ca_pem);

// On a TCP connection to `proxy`: a tunnel to host:port (the API server), within `timeout`. An http proxy is
// asked CONNECT host:port with its credentials and must answer 2xx before anything else; a SOCKS5 proxy is
// asked its CONNECT. TLS then runs inside the tunnel.
Result<bool> open_tunnel(Connection& c, const Proxy& proxy, const std::string& host, std::uint16_t port,
                         std::chrono::milliseconds timeout, const std::stop_token& stop);

}  // namespace gpuadmit::cluster::https
