#include "gpuadmit/server/cpu_quota.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include "file_contents.hpp"

namespace gpuadmit::server {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

std::optional<std::int64_t> number(std::string_view s) {
  s = trimmed(s);
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

std::optional<unsigned> cpus(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  const std::int64_t n = (quota + period - 1) / period;  // 1.5 CPUs: two threads, each busy part time
  return static_cast<unsigned>(std::clamp<std::int64_t>(n, 1, 4096));
}

std::optional<std::string> contents(const char* path) {
  auto text = read_file(path, 4096);
  if (!text) return std::nullopt;
  return *std::move(text);
}

}  // namespace

std::optional<unsigned> cpus_of_cpu_max(std::string_view cpu_max) {
  cpu_max = trimmed(cpu_max);
  const std::size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota = cpu_max.substr(0, space);
  if (quota == "max") return std::nullopt;
  const auto q = number(quota);
  const auto p = number(cpu_max.substr(space + 1));
  if (!q || !p) return std::nullopt;
  return cpus(*q, *p);
}

std::optional<unsigned> cpus_of_cfs(std::string_view quota_us, std::string_view period_us) {
  const auto q = number(quota_us);
  const auto p = number(period_us);
  if (!q || !p) return std::nullopt;
  return cpus(*q, *p);
}

unsigned usable_cpus() {
  unsigned n = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    n = std::min(n, static_cast<unsigned>(std::max(1, CPU_COUNT(&set))));
  std::optional<unsigned> quota;
  if (const auto max = contents("/sys/fs/cgroup/cpu.max")) {
    quota = cpus_of_cpu_max(*max);
  } else {
    for (const char* dir : {"/sys/fs/cgroup/cpu/", "/sys/fs/cgroup/cpu,cpuacct/"}) {
      const auto q = contents((std::string(dir) + "cpu.cfs_quota_us").c_str());
      const auto p = contents((std::string(dir) + "cpu.cfs_period_us").c_str());
      if (q && p) {
        quota = cpus_of_cfs(*q, *p);
        break;
      }
    }
  }
  if (quota) n = std::min(n, *quota);
  return std::max(1U, n);
}

}  // namespace gpuadmit::server
