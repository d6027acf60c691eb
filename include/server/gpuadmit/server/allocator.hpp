// What the process's allocator holds, and giving its free memory back to the system.
//
// tcmalloc, which the shipped binary links (cmake/Allocator.cmake), keeps the pages it frees in its page
// heap and, at its default release rate, returns few of them: after a flood of 10,000 reconnecting TLS
// clients the webhook held 106 MiB free against 0.1 MiB in use, and its RSS never came down
// (docs/reliability.md). `gpuadmit serve` therefore checks every 10 s and hands back what is free beyond
// kKeepFreeBytes.
//
// tcmalloc is found at run time (its C entry points, by dlsym), so the server library needs no link to it:
// the same code runs on glibc's malloc (the tests' allocator) through mallinfo2 and malloc_trim. Under a
// sanitizer, whose allocator neither sees, the figures are glibc's and say nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace gpuadmit::server {

struct AllocatorStats {
  std::string_view allocator;  // "tcmalloc" or "glibc"
  std::uint64_t in_use = 0;    // bytes the program holds
  // tcmalloc: free pages in its page heap, still mapped, which a release returns. glibc: free chunks in its
  // arenas, including pages malloc_trim has already returned (glibc does not count those apart).
  std::uint64_t free = 0;
  std::uint64_t released = 0;  // tcmalloc: bytes it already gave back and still has address space for
};

[[nodiscard]] AllocatorStats allocator_stats();

// Gives the allocator's free memory back to the system (tcmalloc: ReleaseFreeMemory; glibc: malloc_trim).
void release_free_memory();

// Free memory up to this much is kept for the next burst; more than this is given back.
inline constexpr std::uint64_t kKeepFreeBytes = std::uint64_t{16} << 20;
inline constexpr std::chrono::seconds kReleaseInterval{10};

[[nodiscard]] constexpr bool should_release(const AllocatorStats& stats) {
  return stats.free > kKeepFreeBytes;
}

}  // namespace gpuadmit::server
