// Linked with the allocator the shipped binary uses (tcmalloc where it is built, glibc's malloc otherwise),
// so what is measured here is what `gpuadmit serve` does after a burst.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include "gpuadmit/server/allocator.hpp"

namespace gpuadmit::server {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST_CASE("memory freed after a burst goes back to the system once more than the allowance is free") {
  // 64 MiB in 16 KiB blocks, as a flood of connections leaves it; one block in 16 stays, so neither
  // allocator can return the memory by shrinking the end of its heap.
  constexpr std::size_t kBlock = 16 * 1024;
  constexpr std::size_t kBlocks = 4096;
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(kBlocks);
  for (std::size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::make_unique<char[]>(kBlock));
    std::memset(blocks.back().get(), 1, kBlock);
  }
  for (std::size_t i = 0; i < kBlocks; ++i) {
    if (i % 16 != 0) blocks[i].reset();
  }
  const AllocatorStats freed = allocator_stats();
  const std::uint64_t resident_freed = resident_bytes();
  INFO("allocator " << freed.allocator << ": " << freed.free / kMiB << " MiB free, " << freed.in_use / kMiB
                    << " MiB in use, resident " << resident_freed / kMiB << " MiB");
  CHECK(freed.free >= 32 * kMiB);
  CHECK(should_release(freed));

  release_free_memory();

  const std::uint64_t resident_after = resident_bytes();
  INFO("resident after the release " << resident_after / kMiB << " MiB");
  CHECK(resident_freed >= resident_after + 32 * kMiB);
  if (freed.allocator == "tcmalloc") {
    const AllocatorStats after = allocator_stats();
    CHECK_FALSE(should_release(after));
    CHECK(after.released >= freed.released + 32 * kMiB);
  }
  CHECK(blocks.front()[kBlock - 1] == 1);  // the blocks kept are untouched
}

}  // namespace
}  // namespace gpuadmit::server
