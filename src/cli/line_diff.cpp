#include "line_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuadmit::cli {
namespace {

constexpr std::size_t kMaxLines = 2000;
constexpr std::size_t kContext = 2;

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

}  // namespace

std::string line_diff(std::string_view expected, std::string_view actual) {
  const std::vector<std::string_view> a = lines_of(expected);
  const std::vector<std::string_view> b = lines_of(actual);
  if (a.size() > kMaxLines || b.size() > kMaxLines) {
    return "  (the texts differ; over " + std::to_string(kMaxLines) +
           " lines, they are not compared line by line)\n";
  }
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  std::vector<std::vector<std::uint32_t>> lcs(a.size() + 1, std::vector<std::uint32_t>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  struct Line {
    char mark;
    std::string_view text;
  };
  std::vector<Line> lines;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      lines.push_back({' ', a[i++]});
      ++j;
    } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
      lines.push_back({'-', a[i++]});  // what was expected first, as diff -u shows a change
    } else {
      lines.push_back({'+', b[j++]});
    }
  }
  std::string out;
  bool elided = false;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::size_t from = k > kContext ? k - kContext : 0;
    const std::size_t to = std::min(lines.size(), k + kContext + 1);
    const bool near_change = std::any_of(lines.begin() + static_cast<std::ptrdiff_t>(from),
                                         lines.begin() + static_cast<std::ptrdiff_t>(to),
                                         [](const Line& l) { return l.mark != ' '; });
    if (!near_change) {
      if (!elided) out += "  ...\n";
      elided = true;
      continue;
    }
    elided = false;
    out.append(1, lines[k].mark).append(" ").append(lines[k].text).append("\n");
  }
  return out;
}

}  // namespace gpuadmit::cli
