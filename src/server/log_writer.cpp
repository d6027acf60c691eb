#include "gpuadmit/server/log_writer.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <unistd.h>

#include "gpuadmit/server/json_log.hpp"

namespace gpuadmit::server {

// A line reaches the reader at most this long after it is logged (immediately after a quiet spell).
constexpr std::chrono::milliseconds kGather{5};

struct LogWriter::State {
  State(int fd_in, std::size_t limit_in) : fd(fd_in), limit(limit_in) {}

  const int fd;
  const std::size_t limit;
  std::mutex mutex;
  std::condition_variable wake;      // the thread: lines, drops to announce, or stop
  std::condition_variable finished;  // stop(): the thread is done
  std::string pending;               // whole lines, each ending in '\n'
  std::uint64_t unannounced = 0;     // dropped lines the log has not yet been told about
  bool busy = false;  // the thread is writing a batch or gathering the next: no need to wake it
  bool stopping = false;
  bool done = false;
  std::atomic<std::uint64_t> dropped{0};

  void drop(std::uint64_t lines, bool announce) {
    dropped.fetch_add(lines, std::memory_order_relaxed);
    if (announce) {
      unannounced += lines;
    }
  }
};

namespace {

// Writes all of `data` and returns what is left: empty, unless the reader is gone (EPIPE with SIGPIPE
// ignored, a closed descriptor).
std::string_view write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return data;
}

// Lines not (wholly) written: every line ends in '\n', so a torn line still counts.
std::uint64_t lines_in(std::string_view unwritten) {
  return static_cast<std::uint64_t>(std::count(unwritten.begin(), unwritten.end(), '\n'));
}

std::string drop_notice(std::uint64_t lines) {
  LogLine notice(
      spdlog::level::warn,
      "log lines dropped: stdout was not read fast enough, and the webhook does not wait for its log");
  notice.add("dropped", lines);
  std::string line = std::move(notice).finish();
  line += '\n';
  return line;
}

}  // namespace

void LogWriter::run(const std::shared_ptr<State>& s) {
  std::string batch;
  std::unique_lock lock(s->mutex);
  for (;;) {
    s->wake.wait(lock, [&] { return !s->pending.empty() || s->unannounced > 0 || s->stopping; });
    if (s->pending.empty() && s->unannounced == 0) {
      break;  // stopping, and all written
    }
    const std::uint64_t unannounced = std::exchange(s->unannounced, 0);
    batch.swap(s->pending);  // the lines leave without a copy; the old batch's room takes new lines
    s->pending.clear();
    s->busy = true;
    lock.unlock();
    const bool notice_written = unannounced == 0 || write_all(s->fd, drop_notice(unannounced)).empty();
    const std::uint64_t lost = lines_in(notice_written ? write_all(s->fd, batch) : batch);
    lock.lock();
    // Not announced: with the reader gone, the announcement would fail the same way.
    if (lost > 0) {
      s->drop(lost, false);
    }
    // Lines gather for a moment before the next write: at thousands of reviews a second that is one wake-up
    // and one write() per interval instead of one per line.
    s->wake.wait_for(lock, kGather, [&] { return s->stopping; });
    s->busy = false;
  }
  s->done = true;
  s->finished.notify_all();
}

LogWriter::LogWriter(int fd, std::size_t limit) : state_(std::make_shared<State>(fd, limit)) {
  // Detached: stop() waits for it through `finished`, with the deadline a join could not have.
  std::thread([state = state_] { run(state); }).detach();
}

LogWriter::~LogWriter() {
  stop();
}

bool LogWriter::stop(std::chrono::milliseconds deadline) {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->wake.notify_one();
  // The thread holds its own reference to the state, so if the reader never comes back it is simply left
  // blocked in write() until the process exits.
  return state_->finished.wait_for(lock, deadline, [&] { return state_->done; });
}

std::uint64_t LogWriter::dropped() const noexcept {
  return state_->dropped.load(std::memory_order_relaxed);
}

void LogWriter::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);  // under base_sink's lock: the formatter is not thread-safe
  const std::lock_guard lock(state_->mutex);
  State& s = *state_;
  // A waiting thread must be told; a busy one comes back for new lines without being told.
  const bool idle = s.pending.empty() && s.unannounced == 0 && !s.busy;
  if (s.stopping || s.pending.size() + formatted.size() > s.limit) {
    s.drop(1, !s.stopping);
  } else {
    s.pending.append(formatted.data(), formatted.size());
  }
  if (idle) {
    s.wake.notify_one();
  }
}

}  // namespace gpuadmit::server
