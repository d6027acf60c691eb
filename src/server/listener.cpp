#include "listener.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/beast/core/bind_handler.hpp>

#include "session.hpp"

namespace gpuadmit::server {
namespace {

namespace beast = boost::beast;
namespace net = boost::asio;

// accept() failing on EMFILE/ENFILE would otherwise spin: wait a little before the next attempt.
constexpr Milliseconds kAcceptErrorBackoff{50};

}  // namespace

Result<std::shared_ptr<Listener>> Listener::open(net::io_context& ioc, std::vector<net::io_context*> workers,
                                                 const net::ip::tcp::endpoint& endpoint, ServerState& state) {
  auto listener = std::make_shared<Listener>(ioc, std::move(workers), state);
  boost::system::error_code ec;
  const auto failed = [&](std::string_view step) {
    return make_error("cannot " + std::string(step) + " " + endpoint.address().to_string() + ":" +
                      std::to_string(endpoint.port()) + ": " + ec.message());
  };
  net::ip::tcp::acceptor& acceptor = listener->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (ec) return failed("open a socket for");
  acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (ec) return failed("configure");
  acceptor.bind(endpoint, ec);
  if (ec) return failed("bind");
  acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return failed("listen on");
  const auto bound = acceptor.local_endpoint(ec);
  if (ec) return failed("read the bound port of");
  listener->port_ = bound.port();
  return listener;
}

Listener::Listener(net::io_context& ioc, std::vector<net::io_context*> workers, ServerState& state)
    : workers_(std::move(workers)),
      strand_(net::make_strand(ioc)),
      acceptor_(strand_),
      backoff_(strand_),
      state_(state) {}

void Listener::start() {
  net::dispatch(strand_, [self = shared_from_this()] { self->accept(); });
}

void Listener::close() {
  net::dispatch(strand_, [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->backoff_.cancel();
  });
}

void Listener::accept() {
  if (!acceptor_.is_open()) return;
  // Each connection gets its own strand on the next worker's context: its handlers run on that one thread,
  // and close_if_idle from the control strand still reaches it safely.
  net::io_context& worker = *workers_.at(next_worker_++ % workers_.size());
  acceptor_.async_accept(net::make_strand(worker),
                         beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
}

void Listener::on_accept(boost::system::error_code ec, net::ip::tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
  if (ec) {
    state_.connection_errors.warn("accept failed", {{"error", ec.message()}});
    backoff_.expires_after(kAcceptErrorBackoff);
    backoff_.async_wait([self = shared_from_this()](boost::system::error_code) { self->accept(); });
    return;
  }
  // At the cap, make room by closing a connection that is not being answered (SessionRegistry says which).
  // When every one is, close the new one at once rather than stop accepting: the client learns immediately
  // and its failurePolicy decides, instead of waiting in the kernel backlog until its whole timeout has
  // passed (the apiserver's webhook timeouts add up across webhooks on the same request).
  if (state_.sessions.size() >= state_.limits.max_connections) {
    if (const auto room = state_.sessions.take_to_make_room()) {
      // Room for the newcomer, which may be the API server. The count stays at the cap plus the evictions
      // still closing.
      room->session->evict();
      state_.metrics.evicted.inc();
      state_.connection_errors.warn(
          room->answered ? "connection cap reached; closed the least recently active "
                           "connection of the client holding the most"
                         : "connection cap reached; closed the oldest connection never answered of the "
                           "client holding the most",
          {{"max_connections", state_.limits.max_connections}, {"client", room->client}});
    } else {
      state_.metrics.rejected.inc();
      state_.connection_errors.warn(
          "connection cap reached and every connection is being answered; closing the new one",
          {{"max_connections", state_.limits.max_connections}});
      boost::system::error_code ignored;
      socket.close(ignored);
      return accept();
    }
  }
  state_.metrics.accepted.inc();
  std::make_shared<Session>(
      std::move(socket),
      state_.ask_client_certificate ? state_.tls.current() : state_.tls.current_without_client_auth(), state_)
      ->start();
  accept();
}

}  // namespace gpuadmit::server
