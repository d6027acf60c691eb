// Durations as Kubernetes tools write them (Go's time.ParseDuration, whole h/m/s parts only): "720h",
// "23h59m", "90s". Flags and chart values take them; messages print them back in the same form.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit {

// Ten years: longer than any certificate or interval gpuadmit is given, and far from overflowing.
inline constexpr std::chrono::seconds kMaxDuration{10LL * 366 * 24 * 3600};

// One or more <digits><unit> parts, unit h, m or s, each unit at most once and in that order; nonzero.
inline Result<std::chrono::seconds> parse_duration(std::string_view text) {
  const auto bad = [&] {
    return make_error("\"" + std::string(text) +
                      "\" is not a duration: write hours, minutes and seconds as in 720h, 23h59m or 90s");
  };
  if (text.empty()) return bad();
  std::int64_t total = 0;
  std::string_view units = "hms";
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t value = 0;
    const std::size_t start = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      value = value * 10 + (text[i] - '0');
      if (value > kMaxDuration.count())
        return make_error("\"" + std::string(text) + "\" is longer than ten years");
    }
    if (i == start || i == text.size()) return bad();
    const std::size_t unit = units.find(text[i]);
    if (unit == std::string_view::npos) return bad();
    static constexpr std::int64_t kScale[] = {3600, 60, 1};
    total += value * kScale[3 - units.size() + unit];
    units.remove_prefix(unit + 1);
    ++i;
  }
  if (total == 0) return make_error("\"" + std::string(text) + "\" is zero; give a positive duration");
  if (total > kMaxDuration.count())
    return make_error("\"" + std::string(text) + "\" is longer than ten years");
  return std::chrono::seconds(total);
}

// "720h", "23h59m", "90s", "0s": what parse_duration reads back.
inline std::string format_duration(std::chrono::seconds duration) {
  const std::int64_t total = duration.count();
  if (total <= 0) return "0s";
  std::string out;
  if (total >= 3600) out += std::to_string(total / 3600) + "h";
  if (total % 3600 >= 60) out += std::to_string(total % 3600 / 60) + "m";
  if (total % 60 != 0) out += std::to_string(total % 60) + "s";
  return out;
}

}  // namespace gpuadmit
