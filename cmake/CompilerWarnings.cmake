# gpuadmit_warnings: linked PRIVATE into every target so third-party headers keep their own flags.
# No -Wnull-dereference: at -O2 GCC 12 reports it inside libstdc++ (istreambuf_iterator, vector::operator[])
# on paths that cannot happen; a flag that fails release builds at random is worse than none.
option(GPUADMIT_WERROR "Treat warnings as errors" OFF)
option(GPUADMIT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(GPUADMIT_TSAN "Build with ThreadSanitizer (the tsan preset: the tests labelled tsan)" OFF)

add_library(gpuadmit_warnings INTERFACE)
target_compile_options(gpuadmit_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough -Wformat=2
  $<$<BOOL:${GPUADMIT_WERROR}>:-Werror>
  # GCC 12 reports maybe-uninitialized false positives inside libstdc++ (std::regex, std::function) when
  # sanitizers change inlining; the sanitizers themselves check for uninitialized use at run time.
  $<$<AND:$<OR:$<BOOL:${GPUADMIT_SANITIZE}>,$<BOOL:${GPUADMIT_TSAN}>>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>)

option(GPUADMIT_FUZZ "Link the fuzz targets with libFuzzer (clang only; tests/fuzz)" OFF)

if(GPUADMIT_FUZZ)
  # Coverage for libFuzzer in every library the targets link; the targets add -fsanitize=fuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
if(GPUADMIT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(GPUADMIT_TSAN)
  if(GPUADMIT_SANITIZE)
    message(FATAL_ERROR "GPUADMIT_TSAN and GPUADMIT_SANITIZE cannot be combined (ThreadSanitizer excludes ASan)")
  endif()
  # -Wno-tsan: GCC warns that TSan does not model atomic_thread_fence, which Boost.Asio's handler recycling
  # uses; a race it would hide shows as a report in the tests, never as a missing one at a fence we wrote.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  add_link_options(-fsanitize=thread)
endif()
