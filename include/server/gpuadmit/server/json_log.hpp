// JSON-lines logging on top of spdlog: every line is one JSON object starting with "ts", "level" and "msg".
// Strings are escaped by the same writer as responses (k8s::append_json_string), with invalid UTF-8
// replaced by U+FFFD, so a pod name crafted by a user can neither break a line nor turn logging into an
// exception.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/common.h>
#include <nlohmann/json.hpp>

namespace spdlog {
class logger;
}

namespace gpuadmit::server {

class LogWriter;
using LogFields = nlohmann::ordered_json;

// One log line built field by field into a single string: the per-review line is on the hot path, and a
// JSON DOM for it would allocate a node per field, then print them all, on every request.
class LogLine {
 public:
  LogLine(spdlog::level::level_enum level, std::string_view msg);

  LogLine& add(std::string_view key, std::string_view value);
  LogLine& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  LogLine& add(std::string_view key, const std::string& value) { return add(key, std::string_view(value)); }
  LogLine& add(std::string_view key, std::int64_t value);
  LogLine& add(std::string_view key, std::uint64_t value);
  LogLine& add(std::string_view key, bool value);
  LogLine& add(std::string_view key, const std::vector<std::string>& values);
  // Any JSON value (nested objects, arrays of objects).
  LogLine& add_json(std::string_view key, const LogFields& value);

  [[nodiscard]] spdlog::level::level_enum level() const noexcept { return level_; }
  [[nodiscard]] std::string finish() &&;

 private:
  void begin_field(std::string_view key);
  spdlog::level::level_enum level_;
  std::string text_;
};

class JsonLog {
 public:
  explicit JsonLog(std::shared_ptr<spdlog::logger> logger);

  // Lines to stdout at `level` and above, through a LogWriter (a stalled reader never blocks a review);
  // the usual setup for `gpuadmit serve`.
  static JsonLog to_stdout(spdlog::level::level_enum level);
  // The same through a given writer (tests give it a pipe).
  static JsonLog to_writer(std::shared_ptr<LogWriter> writer, spdlog::level::level_enum level);
  // Discards everything (tests that do not look at logs, benchmarks).
  static JsonLog discard();

  [[nodiscard]] bool enabled(spdlog::level::level_enum level) const noexcept;
  // Lines the LogWriter dropped (0 for other sinks, which never drop): gpuadmit_log_lines_dropped_total.
  [[nodiscard]] std::uint64_t dropped_lines() const noexcept;
  void write(LogLine line) const;
  void log(spdlog::level::level_enum level, std::string_view msg, const LogFields& fields = {}) const;
  void debug(std::string_view msg, const LogFields& fields = {}) const {
    log(spdlog::level::debug, msg, fields);
  }
  void info(std::string_view msg, const LogFields& fields = {}) const {
    log(spdlog::level::info, msg, fields);
  }
  void warn(std::string_view msg, const LogFields& fields = {}) const {
    log(spdlog::level::warn, msg, fields);
  }
  void error(std::string_view msg, const LogFields& fields = {}) const {
    log(spdlog::level::err, msg, fields);
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<LogWriter> writer_;  // null unless the lines go through a LogWriter
};

// At most one line per interval; the lines in between are counted and reported as "suppressed" on the next
// one. For errors a client can trigger at will (TLS handshakes, connection cap), so a scan cannot flood logs.
class RateLimitedLog {
 public:
  RateLimitedLog(JsonLog log, std::chrono::nanoseconds interval);
  void warn(std::string_view msg, LogFields fields);

 private:
  JsonLog log_;
  std::int64_t interval_ns_;
  std::atomic<std::int64_t> last_ns_;
  std::atomic<std::uint64_t> suppressed_{0};
};

}  // namespace gpuadmit::server
