// The arena a JsonDocument's containers and decoded strings are copied into, in blocks that start at about
// twice the text's size and double: a document is freed in a few blocks at once. Private to the k8s layer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace gpuadmit::k8s {

class JsonArena {
 public:
  using Blocks = std::vector<std::unique_ptr<std::byte[]>>;

  // `blocks` is the document's: they outlive the arena.
  JsonArena(Blocks& blocks, std::size_t text_size)
      : blocks_(blocks), block_size_(std::clamp<std::size_t>(text_size * 2, 4096, kLargestBlock)) {}

  // A copy of `n` trivially copyable values (nullptr for none): containers when they close, strings that
  // had escapes.
  template <class T>
  const T* store(const T* first, std::size_t n) {
    if (n == 0) {
      return nullptr;
    }
    auto* stored = static_cast<T*>(allocate(n * sizeof(T)));
    std::memcpy(static_cast<void*>(stored), first, n * sizeof(T));
    return stored;
  }

 private:
  static constexpr std::size_t kLargestBlock = std::size_t{1} << 20;

  void* allocate(std::size_t bytes) {
    bytes = (bytes + 7) & ~std::size_t{7};
    if (bytes > left_) {
      const std::size_t size = std::max(bytes, block_size_);
      blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(size));  // nothing is zeroed
      next_ = blocks_.back().get();
      left_ = size;
      block_size_ = std::min(block_size_ * 2, kLargestBlock);
    }
    void* out = next_;
    next_ += bytes;
    left_ -= bytes;
    return out;
  }

  Blocks& blocks_;
  std::byte* next_ = nullptr;
  std::size_t left_ = 0;
  std::size_t block_size_;
};

}  // namespace gpuadmit::k8s
