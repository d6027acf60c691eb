// What a fuzz target does when a property it checks is broken: print what broke and abort, so libFuzzer
// saves the input as a crash and the replay test (replay_main.cpp) fails on it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gpuadmit::fuzz {

[[noreturn]] inline void broken(std::string_view property, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz: property broken: %.*s\n", static_cast<int>(property.size()), property.data());
  if (!detail.empty()) {
    std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(detail.size()), detail.data());
  }
  std::abort();
}

// `detail` is built before the check: pass only what is safe to build when the property holds.
inline void require(bool holds, std::string_view property, std::string_view detail = {}) {
  if (!holds) broken(property, detail);
}

}  // namespace gpuadmit::fuzz
