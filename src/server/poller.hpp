// Runs a callback every `interval` on its own thread until destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>

namespace gpuadmit::server {

class Poller {
 public:
  Poller(std::chrono::milliseconds interval, std::function<void()> tick)
      : thread_([this, interval, tick = std::move(tick)](const std::stop_token& stop) {
          std::unique_lock lock(mutex_);
          while (!stop.stop_requested()) {
            wake_.wait_for(lock, stop, interval, [] { return false; });
            if (stop.stop_requested()) break;
            lock.unlock();
            tick();
            lock.lock();
          }
        }) {}
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;
  ~Poller() = default;  // jthread requests stop and joins; the wait wakes on the stop token

 private:
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: started after the members it uses exist
};

}  // namespace gpuadmit::server
