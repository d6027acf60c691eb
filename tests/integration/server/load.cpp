#include "load.hpp"

namespace gpuadmit::test {

Load::Load(std::function<HttpsClient()> make_client, LoadOptions options)
    : make_client_(std::move(make_client)), options_(std::move(options)) {
  for (int i = 0; i < options_.connections; ++i) {
    threads_.emplace_back([this] {
      HttpsClient client = make_client_();
      bool saw_close = false;
      int on_connection = 0;
      while (!stop_.load()) {
        if (on_connection == options_.requests_per_connection) {
          client.close();
          on_connection = 0;
        }
        auto reply = client.request("POST", options_.target, options_.body);
        ++on_connection;
        std::string failure;
        if (!reply) {
          failure = reply.error().message;
        } else if (!options_.accept(*reply)) {
          failure = "HTTP " + std::to_string(reply->status) + ": " + reply->body.substr(0, 200);
        }
        if (!failure.empty()) {
          const std::lock_guard lock(mutex_);
          failures_.push_back(std::move(failure));
          continue;
        }
        completed_.fetch_add(1);
        if (!reply->keep_alive) {
          closes_seen_.fetch_add(1);
          on_connection = 0;
          if (!saw_close) {
            saw_close = true;
            threads_seen_close_.fetch_add(1);
          }
        }
      }
    });
  }
}

Load::~Load() {
  stop();
}

void Load::stop() {
  stop_.store(true);
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

std::vector<std::string> Load::failures() const {
  const std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace gpuadmit::test
