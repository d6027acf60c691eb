// The request body grows with what arrives, not with what Content-Length promises (faults, hostile clients:
// string_body's up-front reserve took a replica to 222 MB under 10,000 slow-body connections).
#include <catch2/catch.hpp>

#include <string>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "gpuadmit/server/request_body.hpp"

namespace gpuadmit::server {
namespace {

namespace http = boost::beast::http;

constexpr std::string_view kPromise7MiB =
    "POST /validate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Type: application/json\r\nContent-Length: "
    "7340032\r\n\r\n";

template <class Body>
std::size_t capacity_after_header_and_one_byte() {
  http::request_parser<Body> parser;
  parser.body_limit(8 * 1024 * 1024);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(kPromise7MiB.data(), kPromise7MiB.size()), ec);
  REQUIRE_FALSE(ec);
  parser.put(boost::asio::buffer("[", 1), ec);
  REQUIRE_FALSE(ec);
  REQUIRE(parser.get().body() == "[");
  return parser.get().body().capacity();
}

TEST_CASE("a body promised by Content-Length is not reserved before it arrives") {
  CHECK(capacity_after_header_and_one_byte<http::string_body>() >= 7 * 1024 * 1024);  // what it replaces
  CHECK(capacity_after_header_and_one_byte<RequestBody>() <= RequestBody::kInitialReserve);
}

TEST_CASE("a body read in pieces is exactly the bytes sent, whatever their split") {
  const std::string body(200'000, 'x');
  const std::string message =
      "POST /validate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\n\r\n" + body;
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, message.size()}) {
    INFO("pieces of " << piece << " bytes");
    http::request_parser<RequestBody> parser;
    parser.eager(true);
    boost::beast::error_code ec;
    std::string pending;  // what the parser has not taken yet (it takes a header only when whole)
    for (std::size_t at = 0; at < message.size() && !ec; at += piece) {
      pending.append(message, at, piece);
      pending.erase(0, parser.put(boost::asio::buffer(pending), ec));
      if (ec == http::error::need_more) ec = {};
    }
    REQUIRE_FALSE(ec);
    CHECK(parser.is_done());
    CHECK(parser.get().body() == body);
  }
}

}  // namespace
}  // namespace gpuadmit::server
