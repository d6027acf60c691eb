// Background load for the "under load" tests: K client threads posting reviews back to back until stopped,
// reconnecting every few requests so TLS handshakes keep happening. Any transport error or unexpected status
// is a failure, kept with its text.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "support/https_client.hpp"

namespace gpuadmit::test {

struct LoadOptions {
  int connections = 3;
  int requests_per_connection = 10;  // then a fresh connection (and handshake)
  std::string target = "/validate";
  std::string body;
  // Whether a reply counts as success (default: HTTP 200).
  std::function<bool(const HttpReply&)> accept = [](const HttpReply& reply) { return reply.status == 200; };
};

class Load {
 public:
  Load(std::function<HttpsClient()> make_client, LoadOptions options);
  Load(const Load&) = delete;
  Load& operator=(const Load&) = delete;
  ~Load();

  void stop();  // idempotent; joins the threads
  [[nodiscard]] std::uint64_t completed() const { return completed_.load(); }
  [[nodiscard]] std::uint64_t closes_seen() const { return closes_seen_.load(); }
  [[nodiscard]] std::vector<std::string> failures() const;
  // Threads that have received at least one "Connection: close" reply.
  [[nodiscard]] int threads_that_saw_close() const { return threads_seen_close_.load(); }

 private:
  std::function<HttpsClient()> make_client_;
  LoadOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> completed_{0};
  std::atomic<std::uint64_t> closes_seen_{0};
  std::atomic<int> threads_seen_close_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> failures_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuadmit::test
