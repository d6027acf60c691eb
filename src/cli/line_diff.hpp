// A line diff for `gpuadmit test`'s failures: the expected and the actual text, line by line.
#pragma once

#include <string>
#include <string_view>

namespace gpuadmit::cli {

// The lines of `expected` and `actual` as "  same", "- expected only", "+ actual only", from their longest
// common subsequence; unchanged lines more than 2 away from a change are left out ("  ..."). Texts over
// 2,000 lines each are not compared line by line: the result says so.
std::string line_diff(std::string_view expected, std::string_view actual);

}  // namespace gpuadmit::cli
