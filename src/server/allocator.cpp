#include "gpuadmit/server/allocator.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace gpuadmit::server {
namespace {

// gperftools' C API (gperftools/malloc_extension_c.h), present when tcmalloc is linked or preloaded.
struct Tcmalloc {
  using GetProperty = int (*)(const char*, std::size_t*);
  using Release = void (*)();
  GetProperty get_property = nullptr;
  Release release = nullptr;

  [[nodiscard]] bool present() const { return get_property != nullptr && release != nullptr; }
  [[nodiscard]] std::uint64_t property(const char* name) const {
    std::size_t value = 0;
    return get_property(name, &value) != 0 ? value : 0;
  }
};

const Tcmalloc& tcmalloc() {
  static const Tcmalloc found = [] {
    Tcmalloc t;
    // A data pointer to a function pointer: how dlsym returns every symbol (POSIX requires it to work).
    t.get_property =
        reinterpret_cast<Tcmalloc::GetProperty>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
    t.release = reinterpret_cast<Tcmalloc::Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
    return t;
  }();
  return found;
}

}  // namespace

AllocatorStats allocator_stats() {
  const Tcmalloc& t = tcmalloc();
  if (t.present()) {
    return {"tcmalloc", t.property("generic.current_allocated_bytes"),
            t.property("tcmalloc.pageheap_free_bytes"), t.property("tcmalloc.pageheap_unmapped_bytes")};
  }
  const struct mallinfo2 info = ::mallinfo2();
  return {"glibc", info.uordblks + info.hblkhd, info.fordblks, 0};
}

void release_free_memory() {
  const Tcmalloc& t = tcmalloc();
  if (t.present()) {
    t.release();
  } else {
    ::malloc_trim(0);
  }
}

}  // namespace gpuadmit::server
