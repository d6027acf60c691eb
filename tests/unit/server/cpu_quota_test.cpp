// --threads 0: one worker per CPU the container may use (server/cpu_quota.hpp), not one per CPU of the node.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <thread>

#include "gpuadmit/server/cpu_quota.hpp"

using gpuadmit::server::cpus_of_cfs;
using gpuadmit::server::cpus_of_cpu_max;

TEST_CASE("cgroup v2's cpu.max gives the CPUs a container may use, rounded up") {
  auto [text, cpus] = GENERATE(table<std::string, int>({
      {"max 100000\n", 0},  // no limit
      {"100000 100000\n", 1},
      {"150000 100000\n", 2},
      {"50000 100000\n", 1},
      {"400000 100000", 4},
      {"1000 1000000\n", 1},
      {"", 0},
      {"garbage", 0},
      {"100000\n", 0},
      {"-1 100000\n", 0},
      {"100000 0\n", 0},
      {"99999999999999999999 100000\n", 0},
  }));
  CAPTURE(text);
  const auto got = cpus_of_cpu_max(text);
  CHECK((got ? static_cast<int>(*got) : 0) == cpus);
}

TEST_CASE("cgroup v1's CFS quota and period give the same") {
  auto [quota, period, cpus] = GENERATE(table<std::string, std::string, int>({
      {"-1\n", "100000\n", 0},  // no limit
      {"200000\n", "100000\n", 2},
      {"250000\n", "100000\n", 3},
      {"x", "100000", 0},
  }));
  CAPTURE(quota, period);
  const auto got = cpus_of_cfs(quota, period);
  CHECK((got ? static_cast<int>(*got) : 0) == cpus);
}

TEST_CASE("the worker count is at least one and never more than the node's CPUs") {
  const unsigned n = gpuadmit::server::usable_cpus();
  CHECK(n >= 1);
  CHECK(n <= std::max(1U, std::thread::hardware_concurrency()));
}
