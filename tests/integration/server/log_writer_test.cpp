// The log never decides whether a review is answered: a stdout nobody reads must not hang the webhook, and
// what the log loses is counted and announced, never lost silently.
#include <catch2/catch.hpp>

#include <array>
#include <csignal>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>
#include <unistd.h>

#include "gpuadmit/server/json_log.hpp"
#include "gpuadmit/server/log_writer.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::server {
namespace {

using test::admission_review;
using test::fixture_pod;
using test::TestWebhook;

// A pipe whose read end nobody reads until the test says so (the kernel buffers 64 KiB of it).
class Pipe {
 public:
  Pipe() {
    std::array<int, 2> fds{};
    REQUIRE(::pipe(fds.data()) == 0);
    read_end_ = fds[0];
    write_end_ = fds[1];
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  Pipe(Pipe&&) = delete;
  Pipe& operator=(Pipe&&) = delete;
  ~Pipe() {
    close_write_end();
    if (reader_.joinable()) {
      reader_.join();
    }
    if (read_end_ >= 0) {
      ::close(read_end_);
    }
  }
  [[nodiscard]] int write_end() const { return write_end_; }
  // The reader is gone for good: writes fail with EPIPE (SIGPIPE must be ignored, as `gpuadmit serve` does).
  void close_read_end() {
    ::close(read_end_);
    read_end_ = -1;
  }
  // Reads everything from now until the write end is closed.
  void start_reading() {
    REQUIRE(read_end_ >= 0);
    reader_ = std::thread([this] {
      std::array<char, 65536> buffer{};
      for (ssize_t n = 0; (n = ::read(read_end_, buffer.data(), buffer.size())) > 0;) {
        text_.append(buffer.data(), static_cast<std::size_t>(n));
      }
    });
  }
  // Closes the write end and returns all that was read.
  std::string finish() {
    close_write_end();
    reader_.join();
    return text_;
  }

 private:
  void close_write_end() {
    if (write_end_ >= 0) {
      ::close(write_end_);
    }
    write_end_ = -1;
  }
  int read_end_ = -1;
  int write_end_ = -1;
  std::thread reader_;
  std::string text_;
};

std::vector<nlohmann::json> parse_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    REQUIRE(end != std::string::npos);                                    // the text ends with a whole line
    lines.push_back(nlohmann::json::parse(text.substr(pos, end - pos)));  // throws on a torn line
    pos = end + 1;
  }
  return lines;
}

bool is_drop_notice(const nlohmann::json& line) {
  return line.value("level", "") == "warning" && line.value("msg", "").starts_with("log lines dropped") &&
         line.contains("dropped");
}

std::uint64_t announced_drops(const std::vector<nlohmann::json>& lines) {
  std::uint64_t total = 0;
  for (const auto& line : lines) {
    if (is_drop_notice(line)) {
      total += line["dropped"].get<std::uint64_t>();
    }
  }
  return total;
}

TEST_CASE(
    "a stdout nobody reads never blocks a review; the lines past the buffer are counted and announced") {
  Pipe pipe;
  auto writer = std::make_shared<LogWriter>(pipe.write_end(), 16 * 1024);
  std::uint64_t reported = 0;
  constexpr int kReviews = 400;  // about 150 KiB of review lines: the pipe and the buffer hold half of it
  {
    TestWebhook hook({.log = JsonLog::to_writer(writer, spdlog::level::info)});
    auto client = hook.client();
    const nlohmann::json pod = fixture_pod("good-gpu-pod");
    for (int i = 0; i < kReviews; ++i) {
      auto reply = client.request("POST", "/mutate", admission_review(pod, "uid-" + std::to_string(i)));
      INFO("review " << i);
      REQUIRE(
          reply);  // with lines written in place, the review that fills the pipe waits until this times out
      REQUIRE(reply->status == 200);
    }
    auto metrics = client.request("GET", "/metrics", "");
    REQUIRE(metrics);
    const std::string series = "\ngpuadmit_log_lines_dropped_total ";
    const std::size_t at = metrics->body.find(series);
    REQUIRE(at != std::string::npos);
    reported = std::stoull(metrics->body.substr(at + series.size()));
  }
  CHECK(reported > 0);
  CHECK(reported == writer->dropped());

  pipe.start_reading();  // the reader comes back
  REQUIRE(writer->stop(std::chrono::seconds(10)));
  const std::vector<nlohmann::json> lines = parse_lines(pipe.finish());
  std::size_t reviews = 0;
  for (const auto& line : lines) {
    if (!is_drop_notice(line)) {
      CHECK(line["msg"] == "review");
      ++reviews;
    }
  }
  // Every review was either written or counted, and every count was announced.
  CHECK(reviews + writer->dropped() == kReviews);
  CHECK(announced_drops(lines) == writer->dropped());
}

TEST_CASE("a reader that keeps up gets every line, whole and in order, from many threads at once") {
  Pipe pipe;
  pipe.start_reading();
  auto writer = std::make_shared<LogWriter>(pipe.write_end());
  const JsonLog log = JsonLog::to_writer(writer, spdlog::level::info);
  constexpr int kThreads = 4;
  constexpr int kLines = 2'000;
  {
    std::vector<std::jthread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&log, t] {
        for (int n = 0; n < kLines; ++n) {
          log.write(
              LogLine(spdlog::level::info, "line").add("thread", std::int64_t{t}).add("n", std::int64_t{n}));
        }
      });
    }
  }
  REQUIRE(writer->stop(std::chrono::seconds(10)));
  const std::vector<nlohmann::json> lines = parse_lines(pipe.finish());
  CHECK(writer->dropped() == 0);
  REQUIRE(lines.size() == std::size_t{kThreads} * kLines);
  std::map<int, int> next;
  for (const auto& line : lines) {
    const int thread = line["thread"].get<int>();
    CHECK(line["n"].get<int>() == next[thread]);
    ++next[thread];
  }
}

TEST_CASE("stop gives up on a stalled reader at its deadline; what was buffered still reaches it later") {
  Pipe pipe;
  auto writer = std::make_shared<LogWriter>(pipe.write_end());
  const JsonLog log = JsonLog::to_writer(writer, spdlog::level::info);
  constexpr int kLines = 600;  // some 330 KiB: more than the pipe holds, less than the buffer
  const std::string padding(500, 'x');
  for (int n = 0; n < kLines; ++n) {
    log.write(LogLine(spdlog::level::info, "line").add("padding", padding));
  }

  CHECK_FALSE(writer->stop(std::chrono::milliseconds(200)));
  log.write(LogLine(spdlog::level::info, "after stop"));
  CHECK(writer->dropped() ==
        1);  // a line after stop is counted, not queued behind a reader that may not return

  pipe.start_reading();
  REQUIRE(writer->stop(std::chrono::seconds(10)));  // the reader came back: the thread finishes
  const std::vector<nlohmann::json> lines = parse_lines(pipe.finish());
  CHECK(lines.size() == std::size_t{kLines});
  CHECK(announced_drops(lines) == 0);  // after stop there is no one left to announce it; the metric has it
}

// SIGPIPE ignored for one test's lifetime, as `gpuadmit serve` ignores it for good.
class IgnoreSigpipe {
 public:
  IgnoreSigpipe() : previous_(std::signal(SIGPIPE, SIG_IGN)) {}
  IgnoreSigpipe(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe& operator=(const IgnoreSigpipe&) = delete;
  IgnoreSigpipe(IgnoreSigpipe&&) = delete;
  IgnoreSigpipe& operator=(IgnoreSigpipe&&) = delete;
  ~IgnoreSigpipe() { static_cast<void>(std::signal(SIGPIPE, previous_)); }

 private:
  void (*previous_)(int);
};

TEST_CASE("when the reader is gone, every line is counted as dropped and nothing waits for it") {
  const IgnoreSigpipe ignore;
  Pipe pipe;
  pipe.close_read_end();
  auto writer = std::make_shared<LogWriter>(pipe.write_end());
  const JsonLog log = JsonLog::to_writer(writer, spdlog::level::info);
  constexpr int kLines = 1'000;
  for (int n = 0; n < kLines; ++n) {
    log.write(LogLine(spdlog::level::info, "line").add("n", std::int64_t{n}));
    if (n == kLines / 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // lets a batch fail before the rest arrive
    }
  }
  REQUIRE(writer->stop(std::chrono::seconds(10)));
  // The notice of what was lost is not attempted: it would fail the same way. The metric has the count.
  CHECK(writer->dropped() == std::uint64_t{kLines});
}

}  // namespace
}  // namespace gpuadmit::server
