// State shared by the listener and every session of one Server. It outlives all of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>

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
  // `client`: the peer's address, without its port.
  std::uint64_t add(const std::shared_ptr<Session>& session, std::string client);
  // Returns the number still open.
  std::size_t remove(std::uint64_t id);
  // A request was read whole and is being answered: never chosen to make room until answered().
  void busy(std::uint64_t id);
  // Its response is written: the connection waits for its next request, as its most recent activity.
  void answered(std::uint64_t id);

  // The connection chosen to make room at the cap, taken out of the running so it is chosen once.
  struct Room {
    std::shared_ptr<Session> session;
    std::string client;
    bool answered = false;  // it had been; else it was silent since its handshake or trickling a request
  };
  // Of the client (address) holding the most connections, the oldest never answered, else the least
  // recently active; never one whose request is being answered, and nothing when all are. A client that
  // opens connections and holds them, silent or after asking once (any pod can GET /healthz), so gives up
  // its own slots first, and the API server's new connections get in. When one client holds them all (a
  // test on loopback), the oldest never answered goes first: the API server's are answered at once.
  std::optional<Room> take_to_make_room();
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::vector<std::shared_ptr<Session>> snapshot() const;

 private:
  struct Entry {
    std::weak_ptr<Session> session;
    std::string client;
    bool answered = false;
    bool busy = false;
    bool taken = false;
    std::uint64_t last_active = 0;  // of next_activity_'s sequence: no clock needed to order them
  };
  Entry* choose_to_make_room();

  mutable std::mutex mutex_;
  std::uint64_t next_id_ = 0;
  std::uint64_t next_activity_ = 0;
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
  // Runs the routes placed on workers (Placement::kWorker); null: every route runs on its I/O thread.
  boost::asio::thread_pool* review_pool = nullptr;
};

}  // namespace gpuadmit::server
