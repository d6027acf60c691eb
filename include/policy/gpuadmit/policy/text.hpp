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

// The candidates closest to `name` by edit distance, nearest first, for "did you mean": at most `limit`, and
// only those within a third of the name's length (at least 2 edits), the way kubectl suggests commands.
std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// Shell-style glob with '*' only (what policy patterns use).
bool glob_match(std::string_view pattern, std::string_view text) noexcept;

// Number of UTF-8 code points.
std::size_t rune_count(std::string_view text) noexcept;

}  // namespace gpuadmit::policy
