// A small blocking HTTPS/1.1 client over Beast and OpenSSL for the integration tests and the load benchmark.
// Every operation runs under a deadline on the client's own io_context, so a misbehaving server fails a
// test instead of hanging it. Keep-alive: requests reuse the connection until the server says close.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::test {

struct ClientOptions {
  std::string ca_pem;                     // trusted CA; empty: no verification (never in tests of TLS itself)
  std::string server_name = "localhost";  // SNI and the name the certificate must carry
  int min_tls_version = 0;                // e.g. TLS1_2_VERSION; 0: OpenSSL's default
  int max_tls_version = 0;
  std::string cipher_list;  // e.g. "DEFAULT:@SECLEVEL=0" to be able to offer TLS 1.1 at all
  std::chrono::milliseconds timeout{5'000};
  std::string client_certificate_pem;  // presented when the server asks; empty: none
  std::string client_key_pem;
  std::string source_address;  // e.g. "127.0.0.2": another client on loopback; empty: the kernel's choice
};

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool keep_alive = true;

  [[nodiscard]] std::string header(const std::string& lower_case_name) const {
    const auto it = headers.find(lower_case_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

using Done = Result<std::monostate>;

class HttpsClient {
 public:
  HttpsClient(std::string host, std::uint16_t port, ClientOptions options);
  HttpsClient(const HttpsClient&) = delete;
  HttpsClient& operator=(const HttpsClient&) = delete;
  HttpsClient(HttpsClient&&) noexcept;
  HttpsClient& operator=(HttpsClient&&) noexcept;
  ~HttpsClient();

  // TCP connect and TLS handshake.
  Done connect();
  [[nodiscard]] bool connected() const;
  void close();

  // Connects first when not connected; disconnects after a reply without keep-alive.
  Result<HttpReply> request(std::string_view method, std::string_view target, std::string_view body = {},
                            std::string_view content_type = "application/json");

  // Raw access for misbehaving-client tests.
  Done write_raw(std::string_view bytes);
  Result<HttpReply> read_reply();
  // Reads until the server closes the connection or `timeout` passes; the error text says which.
  Result<std::string> wait_for_close(std::chrono::milliseconds timeout);

  [[nodiscard]] std::string peer_certificate_serial() const;  // upper-case hex
  [[nodiscard]] std::string tls_version() const;              // "TLSv1.3", ...
  [[nodiscard]] std::size_t connections_made() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadmit::test
