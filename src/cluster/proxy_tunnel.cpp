#include <array>
#include <vector>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>

#include "gpuadmit/version.hpp"
#include "https_connection.hpp"

namespace gpuadmit::cluster::https {
namespace {

namespace http = beast::http;

// HTTP CONNECT. Its answer is read as a response to CONNECT: no body, the tunnel starts after the header.
Result<bool> http_connect(Connection& c, const Proxy& proxy, const std::string& authority,
                          std::chrono::milliseconds timeout, const std::stop_token& stop) {
  http::request<http::empty_body> request{http::verb::connect, authority, 11};
  request.set(http::field::host, authority);
  request.set(http::field::user_agent, "gpuadmit/" + std::string(kVersion));
  if (!proxy.user_info.empty()) request.set(http::field::proxy_authorization, basic_authorization(proxy));
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

// RFC 1928's reply codes, as the proxy's refusal names them.
std::string socks_reply(unsigned code) {
  static constexpr std::array<const char*, 9> kReplies{"succeeded",
                                                       "general SOCKS server failure",
                                                       "connection not allowed by ruleset",
                                                       "network unreachable",
                                                       "host unreachable",
                                                       "connection refused",
                                                       "TTL expired",
                                                       "command not supported",
                                                       "address type not supported"};
  return code < kReplies.size() ? kReplies.at(code) : "reply " + std::to_string(code);
}

// SOCKS5's CONNECT request for host:port: an IPv4 or IPv6 address as such, else the name (ATYP 3), which
// the proxy resolves; empty for a name over 255 bytes.
std::vector<unsigned char> socks5_request(const std::string& host, std::uint16_t port) {
  std::vector<unsigned char> request{5, 1, 0};
  error_code parse_ec;
  const net::ip::address address = net::ip::make_address(host, parse_ec);
  if (!parse_ec && address.is_v4()) {
    request.push_back(1);
    const auto bytes = address.to_v4().to_bytes();
    request.insert(request.end(), bytes.begin(), bytes.end());
  } else if (!parse_ec) {
    request.push_back(4);
    const auto bytes = address.to_v6().to_bytes();
    request.insert(request.end(), bytes.begin(), bytes.end());
  } else {
    if (host.size() > 255) return {};
    request.push_back(3);
    request.push_back(static_cast<unsigned char>(host.size()));
    request.insert(request.end(), host.begin(), host.end());
  }
  request.push_back(static_cast<unsigned char>(port >> 8U));
  request.push_back(static_cast<unsigned char>(port & 0xFFU));
  return request;
}

// SOCKS5 (RFC 1928) CONNECT to host:port, the name sent for the proxy to resolve; with the URL's user info,
// username/password authentication (RFC 1929), else none.
Result<bool> socks5_connect(Connection& c, const Proxy& proxy, const std::string& host, std::uint16_t port,
                            std::chrono::milliseconds timeout, const std::stop_token& stop) {
  auto& tcp_stream = beast::get_lowest_layer(c.stream);
  tcp_stream.expires_after(timeout);
  const std::string what = "SOCKS5 proxy " + proxy.url;
  const auto send = [&](const std::vector<unsigned char>& bytes) {
    return c.run([&](auto handler) { net::async_write(tcp_stream, net::buffer(bytes), handler); });
  };
  std::array<unsigned char, 262> in{};
  const auto receive = [&](std::size_t n) {
    return c.run([&](auto handler) { net::async_read(tcp_stream, net::buffer(in.data(), n), handler); });
  };
  const auto failed = [&](const error_code& ec) -> Result<bool> {
    if (stop.stop_requested()) return make_error("stopped");
    return make_error(what + ": " + ec.message());
  };
  const bool with_password = !proxy.user_info.empty();
  if (auto ec =
          send(with_password ? std::vector<unsigned char>{5, 2, 0, 2} : std::vector<unsigned char>{5, 1, 0}))
    return failed(ec);
  if (auto ec = receive(2)) return failed(ec);
  if (in[0] != 5) return make_error(what + " does not speak SOCKS5");
  if (in[1] == 2 && with_password) {
    const std::size_t colon = proxy.user_info.find(':');
    const std::string user = proxy.user_info.substr(0, colon);
    const std::string password = colon == std::string::npos ? "" : proxy.user_info.substr(colon + 1);
    if (user.size() > 255 || password.size() > 255)
      return make_error(what + ": user or password over 255 bytes");
    std::vector<unsigned char> auth{1, static_cast<unsigned char>(user.size())};
    auth.insert(auth.end(), user.begin(), user.end());
    auth.push_back(static_cast<unsigned char>(password.size()));
    auth.insert(auth.end(), password.begin(), password.end());
    if (auto ec = send(auth)) return failed(ec);
    if (auto ec = receive(2)) return failed(ec);
    if (in[1] != 0) return make_error(what + " refused the user name and password of the proxy URL");
  } else if (in[1] != 0) {
    return make_error(
        what + " accepts none of the ways offered (" +
        (with_password ? "none, user name and password" : "none: give user:password@ in the URL") + ")");
  }
  const auto request = socks5_request(host, port);
  if (request.empty()) return make_error(what + ": the API server's name is over 255 bytes");
  if (auto ec = send(request)) return failed(ec);
  if (auto ec = receive(5)) return failed(ec);  // VER REP RSV ATYP and the first byte of the address
  if (in[1] != 0) {
    return make_error(what + " refused CONNECT " + host + ":" + std::to_string(port) + ": " +
                      socks_reply(in[1]));
  }
  // The rest of the bound address (which the tunnel does not need) and its port.
  const std::size_t rest = in[3] == 1 ? 3 + 2 : in[3] == 4 ? 15 + 2 : in[3] == 3 ? std::size_t{in[4]} + 2 : 0;
  if (rest == 0) return make_error(what + " answered with an unknown address type");
  if (auto ec = receive(rest)) return failed(ec);
  return true;
}

}  // namespace

Result<bool> open_tunnel(Connection& c, const Proxy& proxy, const std::string& host, std::uint16_t port,
                         std::chrono::milliseconds timeout, const std::stop_token& stop) {
  if (proxy.scheme == ProxyScheme::kSocks5) return socks5_connect(c, proxy, host, port, timeout, stop);
  const std::string authority =
      (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  return http_connect(c, proxy, authority, timeout, stop);
}

}  // namespace gpuadmit::cluster::https
