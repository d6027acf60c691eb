#include <boost/beast/http.hpp>

#include "gpuadmit/version.hpp"
#include "https_connection.hpp"

namespace gpuadmit::cluster::https {

namespace http = beast::http;

// Its answer is read as a response to CONNECT: no body, the tunnel starts after the header.
Result<bool> open_tunnel(Connection& c, const HttpProxy& proxy, const std::string& authority,
                         std::chrono::milliseconds timeout, const std::stop_token& stop) {
  http::request<http::empty_body> request{http::verb::connect, authority, 11};
  request.set(http::field::host, authority);
  request.set(http::field::user_agent, "gpuadmit/" + std::string(kVersion));
  if (!proxy.authorization.empty()) request.set(http::field::proxy_authorization, proxy.authorization);
  auto& tcp_stream = beast::get_lowest_layer(c.stream);
  tcp_stream.expires_after(timeout);
  error_code ec = c.run([&](auto handler) { http::async_write(tcp_stream, request, handler); });
  if (stop.stop_requested()) return make_error("stopped");
  if (ec) return make_error("CONNECT through the proxy " + proxy.url + ": " + ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::empty_body> parser;
  parser.skip(true);
  parser.header_limit(16U * 1024U);
  ec = c.run([&](auto handler) { http::async_read_header(tcp_stream, buffer, parser, handler); });
  if (stop.stop_requested()) return make_error("stopped");
  if (ec) return make_error("CONNECT through the proxy " + proxy.url + ": " + ec.message());
  const unsigned status = parser.get().result_int();
  if (status / 100 != 2) {
    return make_error("the proxy " + proxy.url + " refused CONNECT " + authority + ": " +
                      std::to_string(status) + " " + std::string(parser.get().reason()) +
                      (status == 407 ? " (it wants credentials: http://user:password@host:port)" : ""));
  }
  if (buffer.size() != 0) return make_error("the proxy " + proxy.url + " sent data before the TLS handshake");
  return true;
}

}  // namespace gpuadmit::cluster::https
