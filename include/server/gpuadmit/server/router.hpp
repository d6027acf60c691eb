// Router: (method, path) → handler. Unknown path is 404, a known path with another method is 405 with an
// Allow header. Matching ignores the query string. Handlers are plain callables, so the whole HTTP surface
// is testable without sockets; the session only moves bytes.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "gpuadmit/server/http_message.hpp"

namespace gpuadmit::server {

using Handler = std::function<Response(const Request&)>;

// Where a handler runs: on the connection's I/O thread (cheap answers: probes, metrics), or on the server's
// review workers (reviews, whose evaluation may take up to their deadline), so that it never holds the
// other connections of its I/O thread.
enum class Placement : bool { kIoThread, kWorker };

class Router {
 public:
  // Registers a handler; a second registration for the same method and path replaces the first.
  void add(std::string method, std::string path, Handler handler, Placement placement = Placement::kIoThread);

  // Never throws for routing reasons; a handler's own exception propagates to the caller (the session).
  [[nodiscard]] Response route(const Request& request) const;
  // Where route(request) should run; kIoThread for what no handler takes (404, 405).
  [[nodiscard]] Placement placement(const Request& request) const;

 private:
  struct Route {
    Handler handler;
    Placement placement = Placement::kIoThread;
  };
  // path → method → route; std::map keeps the Allow header in a stable order.
  std::map<std::string, std::map<std::string, Route>, std::less<>> routes_;
};

}  // namespace gpuadmit::server
