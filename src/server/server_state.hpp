// State shared by the listener and every session of one Server. It outlives all of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/metrics.hpp"
#include "gpuadmit/server/router.hpp"
#include "gpuadmit/server/server.hpp"
#include "gpuadmit/server/tls_context.hpp"

namespace gpuadmit::server {

class Session;

// The open connections, oldest first, so shutdown can close the idle ones and learn when the last one is
// gone, and a full server can make room.
class SessionRegistry {
 public:
  std::uint64_t add(const std::shared_ptr<Session>& session);
  // Returns the number still open.
  std::size_t remove(std::uint64_t id);
  // The connection has had a response: from now on it is never chosen to make room.
  void mark_answered(std::uint64_t id);
  // At the cap: the oldest connection never answered (silent since its handshake, or trickling its first
  // request), taken out of the running so it is chosen once; null when every open one has been answered.
  // The API server's connections are answered within milliseconds of opening, so they are never the
  // oldest of these while a client that holds a slot without asking is.
  std::shared_ptr<Session> take_oldest_unanswered();
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::vector<std::shared_ptr<Session>> snapshot() const;

 private:
  struct Entry {
    std::weak_ptr<Session> session;
    bool answered_or_taken = false;
  };
  mutable std::mutex mutex_;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, Entry> sessions_;  // ids grow: oldest first
};

struct ServerState {
  ServerState(const Router& router_in, TlsContextStore& tls_in, Metrics& metrics_in, JsonLog log_in,
              ConnectionLimits limits_in, bool ask_client_certificate_in)
      : router(router_in),
        tls(tls_in),
        metrics(metrics_in),
        log(std::move(log_in)),
        limits(limits_in),
        ask_client_certificate(ask_client_certificate_in),
        tls_errors(log, std::chrono::seconds(1)),
        connection_errors(log, std::chrono::seconds(1)) {}

  const Router& router;
  TlsContextStore& tls;
  Metrics& metrics;
  JsonLog log;
  ConnectionLimits limits;
  bool ask_client_certificate;  // ServerConfig's
  RateLimitedLog tls_errors;
  RateLimitedLog connection_errors;
  SessionRegistry sessions;
  std::atomic<bool> draining{false};  // respond with Connection: close
  std::atomic<bool> stopping{false};  // past the drain period: close connections once idle
  // Called (from any thread) when the last session ends while stopping.
  std::function<void()> on_drained;
};

}  // namespace gpuadmit::server
