# The allocator of what ships (the gpuadmit binary) and of the benchmarks that measure it.
#
# A review builds and frees about 800 small objects (nlohmann's DOM: a map node per member, a string per
# value). In a multi-threaded process glibc's malloc serves few of them from its per-thread cache and takes
# an arena lock for the rest; tcmalloc serves them from per-thread free lists. Under the load bench that
# was 10-20 % less CPU per review (see the closing notes of issue #3 and `make bench`). Sanitizer builds
# keep the sanitizer's allocator, and the tests run there.
option(GPUADMIT_TCMALLOC "Link the gpuadmit binary and the benchmarks with tcmalloc (minimal)" ON)

add_library(gpuadmit_allocator INTERFACE)
if(GPUADMIT_TCMALLOC AND NOT GPUADMIT_SANITIZE)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(TCMALLOC REQUIRED IMPORTED_TARGET libtcmalloc_minimal)
  # Nothing calls tcmalloc by name, so keep the library even where the linker drops unused ones.
  target_link_options(gpuadmit_allocator INTERFACE "LINKER:--no-as-needed")
  target_link_libraries(gpuadmit_allocator INTERFACE PkgConfig::TCMALLOC)
  target_compile_definitions(gpuadmit_allocator INTERFACE GPUADMIT_ALLOCATOR="tcmalloc_minimal"
                                                         GPUADMIT_TCMALLOC_LINKED=1)
else()
  target_compile_definitions(gpuadmit_allocator INTERFACE GPUADMIT_ALLOCATOR="glibc malloc")
endif()
