// A scripted ApiTransport. Each collection path ("/api/v1/nodes") has a queue of exchanges, answered in
// order; every target is recorded. When a queue is empty the call blocks until the test pushes more or
// stops the caller, so a test can wait for "the reflector has consumed everything" (wait_idle) and then
// look at the store, with no sleeps. The watcher's probe (GET /version) is answered apart from the queues:
// 200 unless the test says otherwise (answer_probes).
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/cluster/transport.hpp"

namespace gpuadmit::test {

struct Exchange {
  std::optional<std::string> error;  // a transport failure (connection refused, ...)
  int status = 200;
  std::string body;                // get(); or a non-200 watch answer
  std::vector<std::string> lines;  // a 200 watch: the stream, one event per element
  bool hold_open = false;          // a 200 watch: after the lines, stay open until stopped
};

inline Exchange list_response(const std::string& items_json, const std::string& resource_version,
                              const std::string& continue_token = "") {
  return {std::nullopt,
          200,
          R"({"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":")" + resource_version +
              R"(","continue":")" + continue_token + R"("},"items":)" + items_json + "}",
          {},
          false};
}

inline Exchange watch_stream(std::vector<std::string> lines, bool hold_open = false) {
  return {std::nullopt, 200, {}, std::move(lines), hold_open};
}

inline Exchange failure(std::string message) {
  return {std::move(message), 0, {}, {}, false};
}

inline Exchange http_status(int status, std::string body = "") {
  return {std::nullopt, status, std::move(body), {}, false};
}

class FakeTransport final : public cluster::ApiTransport {
 public:
  void push(const std::string& path, Exchange exchange) {
    const std::lock_guard lock(mutex_);
    queues_[path].push_back(std::move(exchange));
    changed_.notify_all();
  }

  Result<cluster::ApiResponse> get(std::string_view target, std::stop_token stop) override {
    if (target == cluster::kProbeTarget) return probe(stop);
    auto exchange = next(target, stop);
    if (!exchange) return make_error("stopped");
    if (exchange->error) return make_error(*exchange->error);
    return cluster::ApiResponse{exchange->status, exchange->body};
  }

  Result<cluster::ApiResponse> watch(std::string_view target, std::chrono::seconds deadline,
                                     const cluster::WatchCallbacks& callbacks,
                                     std::stop_token stop) override {
    {
      const std::lock_guard lock(mutex_);
      deadlines_.push_back(deadline);
    }
    auto exchange = next(target, stop);
    if (!exchange) return make_error("stopped");
    if (exchange->error) return make_error(*exchange->error);
    if (exchange->status != 200) return cluster::ApiResponse{exchange->status, exchange->body};
    if (callbacks.opened) callbacks.opened();
    for (const std::string& line : exchange->lines) {
      if (!callbacks.line(line)) return cluster::ApiResponse{200, {}};
    }
    if (exchange->hold_open) {
      std::unique_lock lock(mutex_);
      ++held_;
      changed_.notify_all();
      changed_.wait(lock, stop, [&] { return release_; });
      --held_;
      if (stop.stop_requested()) return make_error("stopped");
    }
    return cluster::ApiResponse{200, {}};
  }

  // Answered from the queue of `target` itself, like get(); the patches sent are kept (patches()).
  Result<cluster::ApiResponse> merge_patch(std::string_view target, std::string_view patch,
                                           std::stop_token stop) override {
    {
      const std::lock_guard lock(mutex_);
      patches_.emplace_back(target, patch);
    }
    return get(target, stop);
  }

  // Answered from the queue of "VERB target" ("PUT /apis/..."); the writes are kept (writes()).
  Result<cluster::ApiResponse> write(cluster::WriteVerb verb, std::string_view target, std::string_view body,
                                     std::stop_token stop) override {
    static constexpr std::array<std::string_view, 4> kVerbs{"POST", "PUT", "APPLY", "DELETE"};
    const std::string key =
        std::string(kVerbs.at(static_cast<std::size_t>(verb))) + " " + std::string(target);
    {
      const std::lock_guard lock(mutex_);
      writes_.emplace_back(key, body);
    }
    return get(key, stop);
  }

  [[nodiscard]] std::vector<std::pair<std::string, std::string>> writes() const {
    const std::lock_guard lock(mutex_);
    return writes_;
  }

  [[nodiscard]] std::vector<std::pair<std::string, std::string>> patches() const {
    const std::lock_guard lock(mutex_);
    return patches_;
  }

  [[nodiscard]] std::string endpoint() const override { return "https://fake"; }

  // Waits until some call is blocked on an empty queue (or held open) for `path`.
  bool wait_idle(const std::string& path, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return waiting_[path] > 0 || held_ > 0; });
  }

  // Waits until at least `count` calls for `path` have been made and the last of them is blocked on an
  // empty queue: "the reflector asked for exactly this much, and is waiting". Counting calls, not just
  // idleness, means a wake-up that has not happened yet cannot be mistaken for the end state.
  bool wait_for_calls(const std::string& path, std::size_t count,
                      std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout,
                             [&] { return calls_locked(path) >= count && waiting_[path] > 0; });
  }

  // What GET /version answers from now on; nullopt: nothing, the call blocks until stopped (a partition).
  void answer_probes(std::optional<Exchange> answer) {
    const std::lock_guard lock(mutex_);
    probe_answer_ = std::move(answer);
    changed_.notify_all();
  }

  [[nodiscard]] std::size_t probes() const {
    const std::lock_guard lock(mutex_);
    return probes_;
  }

  // Ends held-open streams.
  void release() {
    const std::lock_guard lock(mutex_);
    release_ = true;
    changed_.notify_all();
  }

  [[nodiscard]] std::vector<std::string> targets(const std::string& path) const {
    const std::lock_guard lock(mutex_);
    return targets_locked(path);
  }

  [[nodiscard]] std::vector<std::chrono::seconds> watch_deadlines() const {
    const std::lock_guard lock(mutex_);
    return deadlines_;
  }

 private:
  [[nodiscard]] std::vector<std::string> targets_locked(const std::string& path) const {
    std::vector<std::string> out;
    for (const std::string& t : targets_) {
      if (t.compare(0, path.size(), path) == 0 && (t.size() == path.size() || t[path.size()] == '?'))
        out.push_back(t);
    }
    return out;
  }
  [[nodiscard]] std::size_t calls_locked(const std::string& path) const {
    return targets_locked(path).size();
  }

  Result<cluster::ApiResponse> probe(const std::stop_token& stop) {
    std::unique_lock lock(mutex_);
    ++probes_;
    changed_.wait(lock, stop, [&] { return probe_answer_.has_value(); });
    if (!probe_answer_) return make_error("stopped");
    if (probe_answer_->error) return make_error(*probe_answer_->error);
    return cluster::ApiResponse{probe_answer_->status, probe_answer_->body};
  }

  std::optional<Exchange> next(std::string_view target, const std::stop_token& stop) {
    const std::string path(target.substr(0, target.find('?')));
    std::unique_lock lock(mutex_);
    targets_.emplace_back(target);
    auto& queue = queues_[path];
    ++waiting_[path];
    changed_.notify_all();
    changed_.wait(lock, stop, [&] { return !queue.empty(); });
    --waiting_[path];
    if (queue.empty()) return std::nullopt;  // stopped
    Exchange exchange = std::move(queue.front());
    queue.pop_front();
    return exchange;
  }

  mutable std::mutex mutex_;
  std::condition_variable_any changed_;
  std::map<std::string, std::deque<Exchange>> queues_;
  std::vector<std::pair<std::string, std::string>> patches_;
  std::vector<std::pair<std::string, std::string>> writes_;
  std::map<std::string, int> waiting_;
  std::vector<std::string> targets_;
  std::vector<std::chrono::seconds> deadlines_;
  int held_ = 0;
  bool release_ = false;
  std::optional<Exchange> probe_answer_ =
      Exchange{std::nullopt, 200, R"({"major":"1","minor":"36"})", {}, false};
  std::size_t probes_ = 0;
};

// A watcher that retries and republishes within milliseconds and logs nothing, for tests over this transport.
inline cluster::WatcherOptions fast_watcher_options() {
  cluster::WatcherOptions options;
  options.reflector.backoff = {std::chrono::milliseconds(1), std::chrono::milliseconds(4)};
  options.store.rebuild_interval = std::chrono::milliseconds(20);
  options.probe_interval = std::chrono::milliseconds(5);
  options.log = cluster::null_sink();
  return options;
}

// What an API server without resource.k8s.io/v1 (before Kubernetes 1.34) answers a LIST of a DRA kind.
inline Exchange not_found() {
  return {
      std::nullopt,
      404,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404})",
      {},
      false};
}

}  // namespace gpuadmit::test
