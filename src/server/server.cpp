#include "gpuadmit/server/server.hpp"
#include "gpuadmit/server/cpu_quota.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include "listener.hpp"
#include "session.hpp"

namespace gpuadmit::server {
namespace {

namespace net = boost::asio;

Result<net::ip::tcp::endpoint> resolve_endpoint(const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const std::string bare =
      host.size() > 1 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
  const net::ip::address address = net::ip::make_address(bare.empty() ? "0.0.0.0" : bare, ec);
  if (!ec) return net::ip::tcp::endpoint(address, port);
  // A name such as "localhost": the first address it resolves to.
  net::io_context ioc;
  net::ip::tcp::resolver resolver(ioc);
  const auto results = resolver.resolve(bare, std::to_string(port), ec);
  if (ec || results.empty())
    return make_error("cannot resolve listen host \"" + host + "\": " + ec.message());
  return results.begin()->endpoint();
}

// One io_context per worker thread, each run by its thread alone: a connection stays on the thread that
// accepted it, so what a request allocates is freed on the thread that allocated it. With one io_context
// run by every thread, a connection's handlers hopped between threads, and tcmalloc's per-thread caches
// kept the memory each thread freed for others: RSS grew under load with two threads, and flat with one.
std::vector<std::unique_ptr<net::io_context>> make_contexts(unsigned count) {
  std::vector<std::unique_ptr<net::io_context>> contexts;
  for (unsigned i = 0; i < count; ++i) contexts.push_back(std::make_unique<net::io_context>(1));
  return contexts;
}

}  // namespace

std::uint64_t SessionRegistry::add(const std::shared_ptr<Session>& session, std::string client) {
  const std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  sessions_.emplace(id, Entry{session, std::move(client), false, false, false, next_activity_++});
  return id;
}

void SessionRegistry::busy(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  if (const auto it = sessions_.find(id); it != sessions_.end()) it->second.busy = true;
}

void SessionRegistry::answered(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  if (const auto it = sessions_.find(id); it != sessions_.end()) {
    it->second.answered = true;
    it->second.busy = false;
    it->second.last_active = next_activity_++;
  }
}

SessionRegistry::Entry* SessionRegistry::choose_to_make_room() {
  std::map<std::string_view, std::size_t> held;
  for (const auto& [id, entry] : sessions_) {
    if (!entry.taken) ++held[entry.client];
  }
  // Most connections held, then never answered, then least recently active (for one never answered, its
  // connecting: the oldest).
  const auto key = [&](const Entry& e) { return std::tuple(held[e.client], !e.answered, ~e.last_active); };
  Entry* best = nullptr;
  for (auto& [id, entry] : sessions_) {
    if (entry.busy || entry.taken) continue;
    if (best == nullptr || key(entry) > key(*best)) best = &entry;
  }
  return best;
}

std::optional<SessionRegistry::Room> SessionRegistry::take_to_make_room() {
  const std::lock_guard lock(mutex_);
  while (Entry* entry = choose_to_make_room()) {
    entry->taken = true;  // a session already ending is passed over, and the next one tried
    if (auto session = entry->session.lock()) return Room{std::move(session), entry->client, entry->answered};
  }
  return std::nullopt;
}

std::size_t SessionRegistry::remove(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  sessions_.erase(id);
  return sessions_.size();
}

std::size_t SessionRegistry::size() const {
  const std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::vector<std::shared_ptr<Session>> SessionRegistry::snapshot() const {
  const std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Session>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, entry] : sessions_) {
    if (auto session = entry.session.lock()) out.push_back(std::move(session));
  }
  return out;
}

struct Server::Impl {
  Impl(ServerConfig config_in, const Router& router, TlsContextStore& tls, Metrics& metrics,
       Readiness& readiness_in, JsonLog log_in)
      : config(std::move(config_in)),
        readiness(readiness_in),
        log(log_in),
        state(router, tls, metrics, std::move(log_in), config.limits, config.ask_client_certificate),
        contexts(make_contexts(config.threads > 0 ? config.threads : usable_cpus())),
        control(net::make_strand(*contexts.front())),
        drain_timer(control),
        grace_timer(control),
        reviews(std::make_unique<net::thread_pool>(review_threads(config, contexts.size()))) {
    state.review_pool = reviews.get();
  }

  static std::size_t review_threads(const ServerConfig& config, std::size_t io_threads) {
    constexpr std::size_t kAtLeast = 2;
    return config.review_threads > 0 ? config.review_threads : std::max(io_threads, kAtLeast);
  }

  void enter_stopping();
  void finish(bool forced);
  void stop_contexts() {
    for (const auto& context : contexts) context->stop();
  }

  ServerConfig config;
  Readiness& readiness;
  JsonLog log;
  ServerState state;
  std::atomic<bool> shutdown_begun{false};
  std::atomic<bool> forced_stop{false};
  std::atomic<bool> finished{false};
  std::vector<std::thread> threads;
  // Declared last among what handlers touch: destroyed first, while the state above is still alive.
  std::vector<std::unique_ptr<net::io_context>>
      contexts;  // [0] also runs the listener and the control strand
  // Keeps a worker's run() going while its context has no connection yet; stop() ends it.
  std::vector<net::executor_work_guard<net::io_context::executor_type>> idle_guards;
  net::strand<net::io_context::executor_type> control;  // shutdown steps run here, in order
  net::steady_timer drain_timer;
  net::steady_timer grace_timer;
  std::shared_ptr<Listener> listener;
  // After the contexts: destroyed before them, since a review it holds owns a session whose socket belongs
  // to one of them.
  std::unique_ptr<net::thread_pool> reviews;
};

void Server::Impl::enter_stopping() {
  listener->close();
  state.stopping.store(true);
  const std::vector<std::shared_ptr<Session>> open = state.sessions.snapshot();
  log.info("drain period over; closing idle connections", {{"open_connections", open.size()}});
  for (const auto& session : open) session->close_if_idle();
  if (state.sessions.size() == 0) return finish(false);
  grace_timer.expires_after(config.shutdown_grace);
  grace_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    log.warn("shutdown grace over; stopping with connections open",
             {{"open_connections", state.sessions.size()}});
    finish(true);
  });
}

void Server::Impl::finish(bool forced) {
  if (finished.exchange(true)) return;
  forced_stop.store(forced);
  stop_contexts();
}

Result<std::unique_ptr<Server>> Server::bind(ServerConfig config, const Router& router, TlsContextStore& tls,
                                             Metrics& metrics, Readiness& readiness, JsonLog log) {
  auto endpoint = resolve_endpoint(config.host, config.port);
  if (!endpoint) return endpoint.error();
  auto impl = std::make_unique<Impl>(std::move(config), router, tls, metrics, readiness, std::move(log));
  std::vector<net::io_context*> workers;
  for (const auto& context : impl->contexts) workers.push_back(context.get());
  auto listener = Listener::open(*impl->contexts.front(), std::move(workers), *endpoint, impl->state);
  if (!listener) return listener.error();
  impl->listener = std::move(*listener);
  Impl* raw = impl.get();
  impl->state.on_drained = [raw] {
    net::post(raw->control, [raw] {
      if (raw->state.sessions.size() == 0) raw->finish(false);
    });
  };
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop_now();
  wait();
  // Sessions still queued in the io_context die with it; they must not call back into a dying server.
  impl_->state.on_drained = nullptr;
}

std::uint16_t Server::port() const noexcept {
  return impl_->listener->local_port();
}

unsigned Server::threads() const noexcept {
  return static_cast<unsigned>(impl_->contexts.size());
}

void Server::start() {
  for (const auto& context : impl_->contexts) impl_->idle_guards.push_back(net::make_work_guard(*context));
  impl_->listener->start();
  for (const auto& owned : impl_->contexts) {
    impl_->threads.emplace_back([impl = impl_.get(), context = owned.get()] {
      // Handlers catch what they can; this is the last line so one bad handler never ends the process.
      for (;;) {
        try {
          context->run();
          return;
        } catch (const std::exception& e) {
          impl->log.error("unexpected exception in the I/O loop", {{"error", e.what()}});
        } catch (...) {
          impl->log.error("unexpected exception in the I/O loop", {{"error", "unknown"}});
        }
      }
    });
  }
}

void Server::begin_shutdown() {
  if (impl_->shutdown_begun.exchange(true)) return;
  impl_->readiness.set_draining();
  impl_->state.draining.store(true);
  impl_->log.info("draining: answering with Connection: close until the drain period ends",
                  {{"drain_ms", impl_->config.drain_period.count()}});
  net::post(impl_->control, [impl = impl_.get()] {
    impl->drain_timer.expires_after(impl->config.drain_period);
    impl->drain_timer.async_wait([impl](boost::system::error_code ec) {
      if (!ec) impl->enter_stopping();
    });
  });
}

void Server::stop_now() {
  impl_->finished.store(true);
  impl_->stop_contexts();
}

bool Server::wait() {
  for (std::thread& thread : impl_->threads) {
    if (thread.joinable()) thread.join();
  }
  impl_->threads.clear();
  // No answer can be written once the I/O threads are gone: a review still queued is dropped, one running
  // ends within its deadline. (A graceful stop gets here with none: every session has ended.)
  impl_->reviews->stop();
  impl_->reviews->join();
  return !impl_->forced_stop.load();
}

}  // namespace gpuadmit::server
