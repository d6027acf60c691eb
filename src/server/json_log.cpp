#include "gpuadmit/server/json_log.hpp"

#include <array>
#include <charconv>
#include <ctime>

#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <unistd.h>

#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/server/log_writer.hpp"

namespace gpuadmit::server {
namespace {

// RFC 3339 in UTC with microseconds. gmtime_r takes glibc's timezone lock, so each thread formats the
// date and time once per second and only the microseconds per line.
void append_timestamp(std::string& out) {
  struct Cache {
    std::time_t second = -1;
    std::array<char, 20> text{};  // "YYYY-MM-DDTHH:MM:SS"
  };
  thread_local Cache cache;
  const auto now = std::chrono::system_clock::now();
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  const auto second = static_cast<std::time_t>(micros / 1'000'000);
  if (second != cache.second) {
    std::tm tm{};
    gmtime_r(&second, &tm);
    std::strftime(cache.text.data(), cache.text.size(), "%Y-%m-%dT%H:%M:%S", &tm);
    cache.second = second;
  }
  out.append(cache.text.data(), 19);
  std::array<char, 8> fraction{'.', '0', '0', '0', '0', '0', '0', 'Z'};
  auto value = static_cast<std::uint32_t>(micros % 1'000'000);
  for (std::size_t i = 6; i >= 1; --i) {
    fraction[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out.append(fraction.data(), fraction.size());
}

// Log lines never throw: bytes that are not UTF-8 become U+FFFD.
void append_json_string(std::string& out, std::string_view text) {
  k8s::append_json_string(out, text, k8s::InvalidUtf8::kReplace);
}

}  // namespace

LogLine::LogLine(spdlog::level::level_enum level, std::string_view msg) : level_(level) {
  text_.reserve(512);
  text_ += R"({"ts":")";
  append_timestamp(text_);
  text_ += R"(","level":)";
  const auto name = spdlog::level::to_string_view(level);
  append_json_string(text_, std::string_view(name.data(), name.size()));
  text_ += R"(,"msg":)";
  append_json_string(text_, msg);
}

void LogLine::begin_field(std::string_view key) {
  text_ += ',';
  append_json_string(text_, key);
  text_ += ':';
}

LogLine& LogLine::add(std::string_view key, std::string_view value) {
  begin_field(key);
  append_json_string(text_, value);
  return *this;
}

LogLine& LogLine::add(std::string_view key, std::int64_t value) {
  begin_field(key);
  std::array<char, 24> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  text_.append(buffer.data(), end);
  return *this;
}

LogLine& LogLine::add(std::string_view key, std::uint64_t value) {
  begin_field(key);
  std::array<char, 24> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  text_.append(buffer.data(), end);
  return *this;
}

LogLine& LogLine::add(std::string_view key, bool value) {
  begin_field(key);
  text_ += value ? "true" : "false";
  return *this;
}

LogLine& LogLine::add(std::string_view key, const std::vector<std::string>& values) {
  begin_field(key);
  text_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text_ += ',';
    append_json_string(text_, values[i]);
  }
  text_ += ']';
  return *this;
}

LogLine& LogLine::add_json(std::string_view key, const LogFields& value) {
  begin_field(key);
  // replace: invalid UTF-8 in a nested value must not throw either.
  text_ += value.dump(-1, ' ', false, LogFields::error_handler_t::replace);
  return *this;
}

std::string LogLine::finish() && {
  text_ += '}';
  return std::move(text_);
}

JsonLog::JsonLog(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}

JsonLog JsonLog::to_stdout(spdlog::level::level_enum level) {
  return to_writer(std::make_shared<LogWriter>(STDOUT_FILENO), level);
}

JsonLog JsonLog::to_writer(std::shared_ptr<LogWriter> writer, spdlog::level::level_enum level) {
  auto logger = std::make_shared<spdlog::logger>("gpuadmit", writer);
  logger->set_pattern("%v");
  logger->set_level(level);
  JsonLog log(std::move(logger));
  log.writer_ = std::move(writer);
  return log;
}

JsonLog JsonLog::discard() {
  auto logger = std::make_shared<spdlog::logger>("gpuadmit", std::make_shared<spdlog::sinks::null_sink_mt>());
  logger->set_level(spdlog::level::off);
  return JsonLog(std::move(logger));
}

bool JsonLog::enabled(spdlog::level::level_enum level) const noexcept {
  return logger_->should_log(level);
}

std::uint64_t JsonLog::dropped_lines() const noexcept {
  return writer_ ? writer_->dropped() : 0;
}

void JsonLog::write(LogLine line) const {
  const spdlog::level::level_enum level = line.level();
  if (!logger_->should_log(level)) return;
  const std::string text = std::move(line).finish();
  // The string_view overload: no format-string parsing, the line is already final.
  logger_->log(level, spdlog::string_view_t(text.data(), text.size()));
}

void JsonLog::log(spdlog::level::level_enum level, std::string_view msg, const LogFields& fields) const {
  if (!logger_->should_log(level)) return;
  LogLine line(level, msg);
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) {
      if (value.is_string()) {
        line.add(key, value.get_ref<const std::string&>());
      } else {
        line.add_json(key, value);
      }
    }
  }
  write(std::move(line));
}

RateLimitedLog::RateLimitedLog(JsonLog log, std::chrono::nanoseconds interval)
    : log_(std::move(log)),
      interval_ns_(interval.count()),
      last_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
                   .count() -
               interval.count()) {}

void RateLimitedLog::warn(std::string_view msg, LogFields fields) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  std::int64_t last = last_ns_.load(std::memory_order_relaxed);
  if (now - last < interval_ns_ || !last_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (const std::uint64_t suppressed = suppressed_.exchange(0, std::memory_order_relaxed); suppressed > 0) {
    fields["suppressed"] = suppressed;
  }
  log_.warn(msg, fields);
}

}  // namespace gpuadmit::server
