// Transport-free HTTP request and response: what the router and its handlers see. The session converts
// Beast messages to and from these, so handlers are plain functions that tests call without sockets.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuadmit::server {

struct Request {
  std::string method;        // "GET", "POST", ... as sent
  std::string target;        // path and query, e.g. "/validate?timeout=10s"
  std::string content_type;  // empty when absent
  std::string body;
  // The client presented a certificate that verified against --client-ca-file's CAs (TlsFiles::client_ca).
  bool client_certificate = false;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers, e.g. Allow on a 405
};

// A plain-text response; a one-line body gets a trailing newline so curl output stays readable.
Response text_response(int status, std::string body);

// The path part of a request target: the apiserver appends "?timeout=Ns" to the configured path.
std::string_view path_of(std::string_view target) noexcept;

// True for "application/json" with or without parameters ("; charset=utf-8"), in any letter case.
bool is_json_media_type(std::string_view content_type) noexcept;

}  // namespace gpuadmit::server
