// LogWriter: the spdlog sink behind `gpuadmit serve`'s stdout. A review appends its line to a bounded buffer
// and goes on; a thread of the writer's own hands the buffer to write(2), many lines per call (it gathers
// lines for 5 ms after each write, so a line reaches stdout within 5 ms, at once after a quiet spell).
//
// Why: written in place, a log line waits for whoever reads stdout. When that reader stalls (a container
// runtime whose log pipe is full, a terminal paused with Ctrl-S, a `| less` nobody scrolls), the 64 KiB pipe
// fills and every review blocks in write() — the webhook hangs, the API server times out, and either every
// pod create fails (failurePolicy: Fail) or GPU pods go through unchecked (Ignore). A webhook must not let
// its log decide that. So a line never waits: while the reader stalls, the buffer fills up to its limit
// (4 MiB by default, some 12,000 review lines), then lines are dropped and counted
// (gpuadmit_log_lines_dropped_total), and once the reader is back the first thing written is a warning
// line saying how many were lost. Nothing is dropped while the reader keeps up.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace gpuadmit::server {

class LogWriter final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  static constexpr std::size_t kDefaultLimit = std::size_t{4} << 20;
  // How long destruction waits for a stalled reader before it gives up on what is still buffered.
  static constexpr std::chrono::milliseconds kStopDeadline{2000};

  // Writes to `fd`, which it neither owns nor closes. `limit` bytes may wait in the buffer.
  explicit LogWriter(int fd, std::size_t limit = kDefaultLimit);
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;
  LogWriter(LogWriter&&) = delete;
  LogWriter& operator=(LogWriter&&) = delete;
  ~LogWriter() override;

  // Writes out what is buffered and ends the thread, waiting at most `deadline` for a stalled reader (the
  // thread is then left blocked in write() until the process exits). Returns false when the deadline came
  // first. Idempotent; lines logged afterwards are dropped and counted.
  bool stop(std::chrono::milliseconds deadline = kStopDeadline);

  // Lines dropped so far: the buffer was full, the writer had stopped, or write() failed.
  [[nodiscard]] std::uint64_t dropped() const noexcept;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}  // lines go out as soon as the thread gets to them

 private:
  struct State;
  static void run(const std::shared_ptr<State>& state);
  // Shared with the thread, which may outlive the writer when a stalled reader holds it in write().
  std::shared_ptr<State> state_;
};

}  // namespace gpuadmit::server
