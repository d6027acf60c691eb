#include "gpuadmit/policy/text.hpp"

#include <algorithm>

namespace gpuadmit::policy {

std::size_t rune_count(std::string_view text) noexcept {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string one_line(std::string_view text, std::size_t limit) {
  const auto is_control = [](char ch) {
    const auto byte = static_cast<unsigned char>(ch);
    return byte < 0x20 || byte == 0x7f;
  };
  // Most summaries are one line already and short: a copy, without the byte-by-byte rebuild below.
  if (std::none_of(text.begin(), text.end(), is_control) && (limit == 0 || text.size() <= limit)) {
    return std::string(text);
  }
  // Control characters (newlines, tabs) make the API server drop a warning silently: fold them to spaces.
  std::string clean;
  clean.reserve(text.size());
  bool pending_space = false;
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      pending_space = !clean.empty();
      continue;
    }
    if (pending_space && clean.back() != ' ') clean += ' ';
    pending_space = false;
    clean += ch;
  }
  const auto is_lead = [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; };
  if (limit == 0 || rune_count(clean) <= limit) return clean;
  std::size_t kept = 0;
  std::size_t cut = 0;
  for (; cut < clean.size(); ++cut) {
    if (is_lead(clean[cut]) && kept++ == limit - 1) break;
  }
  clean.resize(cut);
  while (!clean.empty() && clean.back() == ' ') clean.pop_back();
  return clean + "…";
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto at = text.find(separator);
    if (at != 0) out.emplace_back(text.substr(0, at));
    text = at == std::string_view::npos ? std::string_view() : text.substr(at + 1);
  }
  return out;
}

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit) {
  const std::size_t within = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const std::string& candidate : candidates) {
    // Names are short (DNS labels, at most 253 bytes); the bound keeps a hostile one cheap.
    if (candidate.size() > 253 || name.size() > 253) continue;
    const std::size_t d = edit_distance(name, candidate);
    if (d <= within && d > 0) scored.emplace_back(d, candidate);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
  // Iterative '*' matcher with single backtrack point: linear in practice, no recursion on user input.
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace gpuadmit::policy
