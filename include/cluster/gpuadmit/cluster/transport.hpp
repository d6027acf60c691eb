// ApiTransport: the seam between the list/watch logic and the network. The real one speaks HTTPS/1.1 to the
// API server (Beast + OpenSSL); tests substitute a scripted fake. One call is one request on its own
// connection: LIST pages and watches are minutes apart, so pooling would buy nothing and cost state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct ApiResponse {
  int status = 0;
  std::string body;  // get(): the body; watch(): the body of a non-200 answer only (a Status object)
};

// Called with each line of a watch stream, without its '\n'. Return false to stop reading.
using LineHandler = std::function<bool(std::string_view line)>;

struct WatchCallbacks {
  std::function<void()> opened;  // the API server answered 200: the stream is live (may be empty)
  LineHandler line;
};

// POST, PUT, PATCH with application/apply-patch+yaml (JSON is YAML), DELETE.
enum class WriteVerb : std::uint8_t { kCreate, kReplace, kApply, kDelete };

class ApiTransport {
 public:
  ApiTransport() = default;
  ApiTransport(const ApiTransport&) = delete;
  ApiTransport& operator=(const ApiTransport&) = delete;
  virtual ~ApiTransport() = default;

  // GET `target` (path and query) and read the whole body. Any HTTP status is a response; errors are
  // connection, TLS, deadline and limit failures, or `stop` having been requested. Thread-safe.
  virtual Result<ApiResponse> get(std::string_view target, std::stop_token stop) = 0;

  // GET a watch: on 200, calls `opened`, then hands each line of the (chunked) body to `line` as it
  // arrives, and returns {200, ""} when the server ends the response or `line` returns false. A non-200
  // answer is returned with (a bounded prefix of) its body. The whole call ends by `deadline` (an error
  // then), and so does a stream that stays silent for the transport's idle timeout. Thread-safe.
  virtual Result<ApiResponse> watch(std::string_view target, std::chrono::seconds deadline,
                                    const WatchCallbacks& callbacks, std::stop_token stop) = 0;

  // PATCH `target` with a JSON merge patch (RFC 7386) and read the whole answer, as get() does: for the
  // status of gpuadmit's own policy objects. Thread-safe.
  virtual Result<ApiResponse> merge_patch(std::string_view target, std::string_view patch,
                                          std::stop_token stop) = 0;

  // The background audit's writes: its Lease (create, then replace carrying the resourceVersion it read) and
  // its PolicyReports (server-side apply, and delete). `body` is JSON; a delete sends none. Answered as
  // get() is. Thread-safe.
  virtual Result<ApiResponse> write(WriteVerb verb, std::string_view target, std::string_view body,
                                    std::stop_token stop) = 0;

  // "https://10.96.0.1:443" for messages.
  [[nodiscard]] virtual std::string endpoint() const = 0;
};

struct TransportLimits {
  std::chrono::milliseconds connect_timeout{10'000};  // resolve + TCP connect
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds write_timeout{10'000};
  std::chrono::milliseconds response_timeout{60'000};     // get(): from request written to body read
  std::chrono::milliseconds watch_idle_timeout{150'000};  // watch(): no byte for this long → broken
  std::size_t max_header_bytes = 64 * 1024;
  std::size_t max_body_bytes = 256 * 1024 * 1024;  // one LIST page (500 items) or one error body
  std::size_t max_line_bytes = 8 * 1024 * 1024;    // one watch event; etcd caps an object at 1.5 MiB
};

// HTTPS to the API server: TLS 1.2 or later, the server certificate verified against `config.ca_pem` and
// its name (or IP) checked, the client certificate or bearer token presented. Fails on an unusable
// configuration (bad PEM, key not matching the certificate).
Result<std::shared_ptr<ApiTransport>> make_https_transport(ApiConfig config, TransportLimits limits = {});

}  // namespace gpuadmit::cluster
