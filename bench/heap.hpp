// What the benchmarks measure memory with: the heap in use, the process RSS, and the heap's peak while
// something runs. Header-only; the benchmarks link the allocator that ships (cmake/Allocator.cmake).
#pragma once

#include <malloc.h>
#ifdef GPUADMIT_TCMALLOC_LINKED
#include <gperftools/malloc_extension_c.h>
#endif

#include <atomic>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <thread>

namespace gpuadmit::bench {

// The bytes the program has allocated and not freed. Under tcmalloc (what ships) glibc's mallinfo2 sees
// none of them and read 0, so ask tcmalloc.
inline double heap_mib() {
#ifdef GPUADMIT_TCMALLOC_LINKED
  std::size_t bytes = 0;
  if (MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &bytes) == 0) return -1;
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
#else
  const struct mallinfo2 info = ::mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd) / (1024.0 * 1024.0);
#endif
}

inline double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

// The largest heap in use while it lives, sampled every 2 ms; take() reads it and starts again.
class HeapPeak {
 public:
  HeapPeak()
      : thread_([this](const std::stop_token& stop) {
          while (!stop.stop_requested()) {
            const double now = heap_mib();
            double seen = peak_.load();
            while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
        }) {}
  double take() {
    const double peak = peak_.load();
    peak_.store(0);
    return peak;
  }

 private:
  std::atomic<double> peak_{0};
  std::jthread thread_;
};

}  // namespace gpuadmit::bench
