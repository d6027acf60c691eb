#include "gpuadmit/server/router.hpp"

namespace gpuadmit::server {

void Router::add(std::string method, std::string path, Handler handler, Placement placement) {
  routes_[std::move(path)][std::move(method)] = Route{std::move(handler), placement};
}

Placement Router::placement(const Request& request) const {
  const auto route = routes_.find(path_of(request.target));
  if (route == routes_.end()) return Placement::kIoThread;
  const auto handler = route->second.find(request.method);
  return handler == route->second.end() ? Placement::kIoThread : handler->second.placement;
}

Response Router::route(const Request& request) const {
  const auto route = routes_.find(path_of(request.target));
  if (route == routes_.end()) return text_response(404, "not found");
  const auto handler = route->second.find(request.method);
  if (handler == route->second.end()) {
    std::string allow;
    for (const auto& [method, unused] : route->second) allow += (allow.empty() ? "" : ", ") + method;
    Response response = text_response(405, "method not allowed; use " + allow);
    response.headers.emplace_back("Allow", allow);
    return response;
  }
  return handler->second.handler(request);
}

}  // namespace gpuadmit::server
