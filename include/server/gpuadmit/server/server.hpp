// The HTTPS listener: N threads on one io_context, one strand per connection, every I/O step under a
// deadline, every input under a limit. It moves bytes between sockets and a Router; it knows nothing of
// admission.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "gpuadmit/server/readiness.hpp"
#include "gpuadmit/server/router.hpp"
#include "gpuadmit/server/tls_context.hpp"

namespace gpuadmit::server {

using Milliseconds = std::chrono::milliseconds;

struct ConnectionLimits {
  Milliseconds handshake_timeout{10'000};
  // Above the 90 s IdleConnTimeout of the apiserver's Go transport, so the client always closes an idle
  // connection first: Go does not retry a POST written to a reused connection the server has just closed.
  Milliseconds idle_timeout{120'000};
  // From the handshake to the first byte of the first request: the API server writes its request as soon as
  // it has connected, so a connection that says nothing only holds one of max_connections' slots.
  Milliseconds first_request_timeout{10'000};
  Milliseconds header_timeout{10'000};  // from the request's first byte to the end of its header
  Milliseconds body_timeout{10'000};    // from the end of the header to the end of the body
  Milliseconds write_timeout{10'000};   // each response, and the TLS close_notify exchange
  std::size_t header_limit = std::size_t{16} * 1024;  // 431 beyond
  // 413 beyond: two 3 MB objects (object and oldObject) plus the envelope, as controller-runtime reasons.
  std::size_t body_limit = std::size_t{7} * 1024 * 1024;
  // At the cap a new connection takes a slot of the client holding the most (its oldest never answered, else
  // its least recently active), else is closed at once (SessionRegistry::take_to_make_room). A TLS connection
  // costs about 75 kB here (Asio's TLS stream keeps four 17 kB buffers), so 512 hold under 40 MB; the API
  // server keeps a few dozen per replica.
  std::size_t max_connections = 512;
};

struct ServerConfig {
  std::string host = "0.0.0.0";
  std::uint16_t port = 8443;  // 0: any free port; read it back with Server::port()
  unsigned threads = 0;       // I/O threads; 0: one per CPU the container may use (cpu_quota.hpp)
  // Threads that run the reviews (Placement::kWorker), apart from the I/O threads, so a review that takes
  // up to its deadline never holds the other connections of its thread; 0: as many as the I/O threads, and
  // at least 2, so one slow review never makes the next one wait on a 1-CPU container.
  unsigned review_threads = 0;
  ConnectionLimits limits;
  // SIGTERM to stop accepting: keep answering (with Connection: close) while the apiserver's endpoints
  // catch up with the terminating pod.
  Milliseconds drain_period{5'000};
  // After the drain: how long in-flight requests get before the server stops regardless.
  Milliseconds shutdown_grace{10'000};
  // With a client CA (TlsFiles::client_ca): ask each client for a certificate. Off for the metrics port,
  // which Prometheus reaches without one.
  bool ask_client_certificate = true;
};

class Server {
 public:
  // Binds the listening socket (so port 0 is resolved here); serves nothing until start().
  static Result<std::unique_ptr<Server>> bind(ServerConfig config, const Router& router, TlsContextStore& tls,
                                              Metrics& metrics, Readiness& readiness, JsonLog log);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  Server(Server&&) = delete;
  Server& operator=(Server&&) = delete;
  ~Server();

  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] unsigned threads() const noexcept;

  void start();
  // Graceful stop, what SIGTERM does: /readyz turns 503, responses carry Connection: close, new connections
  // are still served for the drain period; then the listener closes, idle connections are closed, in-flight
  // requests finish, and wait() returns (at the latest shutdown_grace after the drain period). Idempotent,
  // thread-safe.
  void begin_shutdown();
  // Immediate stop: pending work is abandoned.
  void stop_now();
  // Blocks until the server has stopped and its threads have ended. Returns false if the grace deadline
  // forced the stop with connections still open.
  bool wait();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuadmit::server
