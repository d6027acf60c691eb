// How many worker threads `--threads 0` means: one per CPU the container may use. The node's CPU count
// (std::thread::hardware_concurrency) is wrong in a pod: on a 96-core node a webhook limited to 1 CPU ran
// 96 I/O threads that the CFS quota throttled together, each review waiting out the others' slices.
#pragma once

#include <optional>
#include <string_view>

namespace gpuadmit::server {

// cgroup v2's cpu.max ("max 100000", "150000 100000"): the CPUs it allows, rounded up; nullopt for no limit
// or text that is not the kernel's.
std::optional<unsigned> cpus_of_cpu_max(std::string_view cpu_max);
// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us (-1: no limit): the same.
std::optional<unsigned> cpus_of_cfs(std::string_view quota_us, std::string_view period_us);

// The least of: the CPUs this process may run on (sched_getaffinity), the cgroup's quota (v2 at
// /sys/fs/cgroup/cpu.max, else v1 at /sys/fs/cgroup/cpu{,,cpuacct}/), and the node's count; at least 1.
unsigned usable_cpus();

}  // namespace gpuadmit::server
