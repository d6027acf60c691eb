// Waiting on another thread's state without sleeping a guessed amount: poll until true or the deadline.
#pragma once

#include <chrono>
#include <thread>

namespace gpuadmit::test {

// Returns the condition's last value, so a test that times out fails on the condition itself.
template <typename Condition>
bool eventually(Condition&& condition,
                std::chrono::milliseconds deadline = std::chrono::milliseconds(5'000)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace gpuadmit::test
