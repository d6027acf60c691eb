// Accepts connections on its own strand and hands each one, with its own strand on one worker thread's
// io_context (round robin), to a Session.
#pragma once

#include <memory>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "gpuadmit/common/result.hpp"
#include "server_state.hpp"

namespace gpuadmit::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Opens, binds and listens; port 0 picks a free port (see local_port()).
  // `ioc` runs the acceptor; each accepted connection goes to the next of `workers` in turn and stays there.
  static Result<std::shared_ptr<Listener>> open(boost::asio::io_context& ioc,
                                                std::vector<boost::asio::io_context*> workers,
                                                const boost::asio::ip::tcp::endpoint& endpoint,
                                                ServerState& state);
  Listener(boost::asio::io_context& ioc, std::vector<boost::asio::io_context*> workers, ServerState& state);

  // The port bound at open(), kept then: the acceptor itself belongs to strand_, and close() may be running
  // there while another thread asks (the tsan preset caught the test harness doing exactly that).
  [[nodiscard]] std::uint16_t local_port() const noexcept { return port_; }
  void start();
  void close();  // thread-safe; the pending accept ends and no new connection is taken

 private:
  void accept();
  void on_accept(boost::system::error_code ec, boost::asio::ip::tcp::socket socket);

  std::vector<boost::asio::io_context*> workers_;
  std::size_t next_worker_ = 0;  // touched on strand_ only
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_;
  ServerState& state_;
  std::uint16_t port_ = 0;  // written once in open(), before any other thread sees the listener
};

}  // namespace gpuadmit::server
