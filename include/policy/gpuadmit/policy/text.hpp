// Text helpers for what users read: single-line, length-bounded messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::policy {

// Folds control characters (which make the API server drop a warning) into single spaces and trims to
// `limit` characters (UTF-8 code points), ending in "…" when cut. limit 0 means no trimming.
std::string one_line(std::string_view text, std::size_t limit = 120);

// "a,b,,c" split at `separator` → {"a", "b", "c"}: empty items are dropped.
std::vector<std::string> split(std::string_view text, char separator);

// Number of UTF-8 code points.
std::size_t rune_count(std::string_view text) noexcept;

}  // namespace gpuadmit::policy
