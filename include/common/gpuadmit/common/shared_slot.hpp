// One shared_ptr that request threads read and another thread replaces: the policy in force, the TLS
// context, the cluster snapshot.
#pragma once

#include <memory>
#include <mutex>
#include <utility>

namespace gpuadmit {

// A copy of the pointer under a mutex held for that copy only; the old value is released outside it.
// Not std::atomic<std::shared_ptr>: libstdc++ 12 releases the lock a load() takes with a relaxed operation,
// so the load's read of the pointer is not ordered before the next store's write. ThreadSanitizer reports
// that as a race (the tsan preset found it), and by the memory model it is one.
template <typename T>
class SharedSlot {
 public:
  explicit SharedSlot(std::shared_ptr<T> value) : value_(std::move(value)) {}

  [[nodiscard]] std::shared_ptr<T> load() const {
    const std::lock_guard lock(mutex_);
    return value_;
  }

  void store(std::shared_ptr<T> value) {
    {
      const std::lock_guard lock(mutex_);
      std::swap(value_, value);
    }
    // `value` now holds the old pointer; the last reference, if this is it, is dropped here, unlocked.
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<T> value_;
};

}  // namespace gpuadmit
