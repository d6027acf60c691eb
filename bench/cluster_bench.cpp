// Cluster view benchmark: what a 5,000-node cluster (or --nodes N) costs gpuadmit.
//   - parsing a LIST of 5,000 realistic GPU/CPU nodes into the watcher's typed cache;
//   - rebuilding the immutable ClusterSnapshot from that cache (what every change costs), time and heap;
//   - node-fit (and every rule) evaluated for one pod against the 5,000 nodes.
// Memory is the heap in use (tcmalloc's current_allocated_bytes, or glibc mallinfo2 uordblks + hblkhd) before
// and after, plus the process RSS delta, with the objects kept alive while measured. Prints numbers; asserts
// nothing. Run: make bench.
#include <malloc.h>
#ifdef GPUADMIT_TCMALLOC_LINKED
#include <gperftools/malloc_extension_c.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/policy/evaluate.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace gpuadmit;

// The view's shape: `--nodes N` (default 5,000) and `--gpu-percent P` (default 80), GPU nodes split over
// the GPU pools in the default's proportions, the rest CPU only. GKE's largest clusters (65,000 nodes, 10 %
// GPU): --nodes 65000 --gpu-percent 10.
struct Shape {
  int nodes = 5000;
  int gpu_percent = 80;
};

// The bytes the program has allocated and not freed. Under tcmalloc (what ships) glibc's mallinfo2 sees
// none of them and read 0, so ask tcmalloc.
double heap_mib() {
#ifdef GPUADMIT_TCMALLOC_LINKED
  std::size_t bytes = 0;
  if (MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &bytes) == 0) return -1;
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
#else
  const struct mallinfo2 info = ::mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd) / (1024.0 * 1024.0);
#endif
}

double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0;
  long resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * 4096.0 / (1024.0 * 1024.0);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Pool {
  const char* prefix;
  int gpus;
  const char* product;
  const char* memory_mib;
  int share_percent;
};

// A node as the API server sends it in a LIST: the labels GPU feature discovery and the cloud put on it,
// taints, capacity/allocatable, conditions, addresses, nodeInfo, images. Most of it is dropped by the cache.
json make_node(int i, const Pool& pool) {
  const std::string name = std::string(pool.prefix) + "-" + std::to_string(i);
  json labels = {
      {"kubernetes.io/hostname", name},
      {"kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"node.kubernetes.io/instance-type", std::string(pool.prefix) + "-instance"},
      {"topology.kubernetes.io/region", "europe-west4"},
      {"topology.kubernetes.io/zone", std::string("europe-west4-") + static_cast<char>('a' + i % 3)},
      {"cloud.google.com/gke-nodepool", std::string(pool.prefix) + "-pool"},
      {"cloud.google.com/machine-family", "a2"}};
  json capacity = {{"cpu", "96"}, {"memory", "1056Gi"}, {"pods", "110"}, {"ephemeral-storage", "2Ti"}};
  json taints = json::array();
  if (pool.gpus > 0) {
    labels.update({{"nvidia.com/gpu.present", "true"},
                   {"nvidia.com/gpu.product", pool.product},
                   {"nvidia.com/gpu.memory", pool.memory_mib},
                   {"nvidia.com/gpu.count", std::to_string(pool.gpus)},
                   {"nvidia.com/cuda.driver.major", "535"},
                   {"nvidia.com/cuda.driver.minor", "104"},
                   {"nvidia.com/cuda.runtime.major", "12"},
                   {"nvidia.com/cuda.runtime.minor", "2"},
                   {"nvidia.com/gpu.family", "ampere"},
                   {"nvidia.com/mig.capable", "true"}});
    capacity["nvidia.com/gpu"] = std::to_string(pool.gpus);
    taints.push_back({{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}});
  }
  json conditions = json::array();
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    const bool ready = std::string(type) == "Ready";
    conditions.push_back({{"type", type},
                          {"status", ready ? "True" : "False"},
                          {"lastHeartbeatTime", "2026-11-29T12:00:00Z"},
                          {"lastTransitionTime", "2026-11-01T08:00:00Z"},
                          {"reason", ready ? "KubeletReady" : "KubeletHasSufficientMemory"},
                          {"message", "kubelet is posting ready status"}});
  }
  json images = json::array();
  for (int k = 0; k < 8; ++k) {
    images.push_back({{"names",
                       {"nvcr.io/nvidia/pytorch@sha256:" + std::string(64, static_cast<char>('a' + k)),
                        "nvcr.io/nvidia/pytorch:24.0" + std::to_string(k) + "-py3"}},
                      {"sizeBytes", 9'000'000'000LL + k}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"uid", "6f1c8f9e-0000-4000-8000-" + std::to_string(100000000000LL + i)},
            {"resourceVersion", std::to_string(1000 + i)},
            {"creationTimestamp", "2026-11-01T08:00:00Z"},
            {"labels", labels},
            {"annotations",
             {{"node.alpha.kubernetes.io/ttl", "0"},
              {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}}}},
          {"spec",
           {{"podCIDR", "10.64.0.0/24"}, {"providerID", "gce://project/zone/" + name}, {"taints", taints}}},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions", conditions},
            {"addresses",
             {{{"type", "InternalIP"}, {"address", "10.0.0.1"}}, {{"type", "Hostname"}, {"address", name}}}},
            {"nodeInfo",
             {{"kubeletVersion", "v1.35.4"},
              {"containerRuntimeVersion", "containerd://1.7.20"},
              {"osImage", "Container-Optimized OS"},
              {"kernelVersion", "6.1.100"}}},
            {"images", images}}}};
}

json make_list(const Shape& shape) {
  // The GPU nodes: half 8x A100, an eighth 8x H100, a quarter 4x L4, an eighth 1x T4 (the default's
  // 40/10/20/10 % of 80 %); the rest CPU only.
  const std::vector<Pool> pools = {{"a100", 8, "NVIDIA-A100-SXM4-80GB", "81920", 40},
                                   {"h100", 8, "NVIDIA-H100-80GB-HBM3", "81559", 10},
                                   {"l4", 4, "NVIDIA-L4", "23034", 20},
                                   {"t4", 1, "Tesla-T4", "15360", 10}};
  const int gpu_nodes = shape.nodes * shape.gpu_percent / 100;
  json items = json::array();
  for (const Pool& pool : pools) {
    const int count = gpu_nodes * pool.share_percent / 80;
    for (int i = 0; i < count; ++i) items.push_back(make_node(i, pool));
  }
  const Pool cpu{"cpu", 0, "", "", 0};
  for (int i = static_cast<int>(items.size()); i < shape.nodes; ++i) items.push_back(make_node(i, cpu));
  return {{"apiVersion", "v1"},
          {"kind", "NodeList"},
          {"metadata", {{"resourceVersion", "99999"}}},
          {"items", items}};
}

json make_pod(const std::string& gpus, const json& extra_spec = json::object()) {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "train"}, {"namespace", "ml-team"}}},
      {"spec",
       {{"tolerations", {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
        {"containers",
         {{{"name", "train"},
           {"image", "nvcr.io/nvidia/pytorch:24.05-py3"},
           {"resources",
            {{"limits", {{"nvidia.com/gpu", gpus}, {"cpu", "8"}, {"memory", "64Gi"}}},
             {"requests", {{"nvidia.com/gpu", gpus}, {"cpu", "8"}, {"memory", "64Gi"}}}}}}}}}}};
  pod["spec"].update(extra_spec);
  return pod;
}

constexpr std::string_view kNodeFitOnly = R"(apiVersion: gpuadmit.io/v1alpha1
kind: Policy
metadata: {name: node-fit-only}
spec:
  rules:
    gpu-intent: {action: off}
    gpu-whole-units: {action: off}
    gpu-limit-equals-request: {action: off}
    guaranteed-qos: {action: off}
    memory-floor: {action: off}
    gpu-tolerations: {action: off}
    gpu-type: {action: off}
    cuda-driver: {action: off}
    gpu-quota: {action: off}
    checkpoint-pvc: {action: off}
    stray-gpu-toleration: {action: off}
    node-fit: {action: enforce}
)";

// Per-pod time: as many rounds as fit in about half a second (at least 3, at most 2,000), so a slow case
// still reports a number instead of running for minutes.
double evaluate_us(const json& pod, const policy::RuleSet& rules, const policy::ClusterView* view,
                   std::size_t* violations, int* rounds_run) {
  const auto document = k8s::OwnedJsonDocument::of(pod);
  if (!document) return 0;
  const auto start = Clock::now();
  int rounds = 0;
  while (rounds < 2000 && (rounds < 3 || Clock::now() - start < std::chrono::milliseconds(500))) {
    auto decision = policy::evaluate({document->root(), "ml-team", policy::Mode::kValidate, view}, rules);
    *violations += decision ? decision->violations.size() : 1000000;
    ++rounds;
  }
  *rounds_run = rounds;
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / rounds;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress is visible when piped
  Shape shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--nodes" && value > 0) {
      shape.nodes = value;
    } else if (flag == "--gpu-percent" && value >= 0 && value <= 100) {
      shape.gpu_percent = value;
    } else {
      std::fprintf(stderr, "usage: gpuadmit_cluster_bench [--nodes N] [--gpu-percent P]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: gpuadmit_cluster_bench [--nodes N] [--gpu-percent P]\n");
    return 2;
  }
  std::printf(
      "cluster view benchmark: %d nodes, %d %% GPU (of those 50 %% 8xA100, 12.5 %% 8xH100, 25 %% 4xL4, "
      "12.5 %% 1xT4)\n",
      shape.nodes, shape.gpu_percent);
  json list = make_list(shape);
  const std::size_t list_bytes = list.dump().size();

  // 1. The watcher's cache: a LIST parsed into typed nodes (only the fields the rules read), as the reflector
  // stores it. Measured while the LIST body is still alive, so freeing it does not hide in the delta.
  cluster::SnapshotStore store;
  const double heap_before_cache = heap_mib();
  const double rss_before_cache = rss_mib();
  auto start = Clock::now();
  cluster::SnapshotStore::Entries entries;
  entries.reserve(list["items"].size());
  for (const json& item : list["items"]) {
    auto object = cluster::parse_object(cluster::Kind::kNode, item);
    auto key = cluster::object_key(item);
    if (!object || !key) {
      std::fprintf(stderr, "node did not parse\n");
      return 1;
    }
    entries.emplace_back(std::move(*key), std::move(*object));
  }
  const double parse_ms = ms_since(start);
  const std::size_t listed = entries.size();
  store.replace(cluster::Kind::kNode, std::move(entries));
  for (const cluster::Kind kind : cluster::kAllKinds) {
    if (kind != cluster::Kind::kNode) store.replace(kind, {});
  }
  const double cache_heap = heap_mib() - heap_before_cache;
  const double cache_rss = rss_mib() - rss_before_cache;
  list = json();  // the LIST body is gone once parsed, as in the reflector

  // 2. The snapshot: copy out of the cache, indexes, publish. First build, then a rebuild after one change
  // (a node tainted): what every change costs.
  const double heap_before_snapshot = heap_mib();
  const double rss_before_snapshot = rss_mib();
  start = Clock::now();
  store.rebuild();
  const double build_ms = ms_since(start);
  const double snapshot_heap = heap_mib() - heap_before_snapshot;
  const double snapshot_rss = rss_mib() - rss_before_snapshot;
  const std::size_t first_nodes = store.snapshot()->nodes.size();
  const std::size_t groups = store.snapshot()->node_groups.size();
  std::vector<double> rebuilds;
  for (int i = 0; i < 10; ++i) {
    k8s::Node changed = std::get<k8s::Node>(*cluster::parse_object(
        cluster::Kind::kNode, make_node(i, {"a100", 8, "NVIDIA-A100-SXM4-80GB", "81920", 0})));
    changed.unschedulable = i % 2 == 0;
    std::string key = changed.name;  // not changed.name in the call: the move may come first
    store.upsert(cluster::Kind::kNode, std::move(key), std::move(changed));
    start = Clock::now();
    store.rebuild();
    rebuilds.push_back(ms_since(start));
  }
  std::sort(rebuilds.begin(), rebuilds.end());
  const policy::ClusterView view = store.view();

  std::printf("  LIST body                 %8.1f MiB (%zu bytes of JSON)\n", list_bytes / (1024.0 * 1024.0),
              list_bytes);
  std::printf("  parse into the cache      %8.1f ms (%zu nodes)\n", parse_ms, listed);
  std::printf("  cache                     %8.1f MiB heap, %.1f MiB RSS delta\n", cache_heap, cache_rss);
  std::printf("  snapshot build (first)    %8.1f ms (%zu nodes in %zu groups)\n", build_ms, first_nodes,
              groups);
  std::printf("  snapshot rebuild          %8.1f ms median, %.1f ms max of %zu (one node changed each)\n",
              rebuilds[rebuilds.size() / 2], rebuilds.back(), rebuilds.size());
  std::printf("  snapshot                  %8.1f MiB heap, %.1f MiB RSS delta   (target < 50 MiB)\n",
              snapshot_heap, snapshot_rss);
  std::printf("  cache + snapshot          %8.1f MiB heap\n", cache_heap + snapshot_heap);

  // 3. node-fit against the view's nodes, per pod (parse of the pod included: that is what a review costs).
  auto node_fit_only = config::load_policy(kNodeFitOnly, "<bench>");
  if (!node_fit_only) {
    std::fprintf(stderr, "%s\n", node_fit_only.error().message.c_str());
    return 1;
  }
  const policy::RuleSet& all_rules = config::default_rule_set();
  struct Case {
    const char* what;
    json pod;
  };
  const std::vector<Case> cases = {
      {"1 GPU, fits (the first GPU node)", make_pod("1")},
      {"8 GPUs, fits only the 8-GPU nodes", make_pod("8")},
      {"8 GPUs on H100 (node selector)",
       make_pod("8", {{"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}})},
      {"16 GPUs: no node, full breakdown", make_pod("16")},
      {"4 GPUs on a model nobody has",
       make_pod("4", {{"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-B200"}}}})},
  };
  std::size_t violations = 0;
  std::printf(
      "  per pod (validate)                     node-fit only | all rules, with view | all rules, no view\n");
  for (const Case& c : cases) {
    int n1 = 0;
    int n2 = 0;
    int n3 = 0;
    const double fit = evaluate_us(c.pod, *node_fit_only, &view, &violations, &n1);
    const double all = evaluate_us(c.pod, all_rules, &view, &violations, &n2);
    const double blind = evaluate_us(c.pod, all_rules, nullptr, &violations, &n3);
    std::printf("    %-36s %10.2f us | %14.2f us     | %8.2f us   (rounds %d/%d/%d)\n", c.what, fit, all,
                blind, n1, n2, n3);
  }
  std::printf("  (target: node-fit < 100 us per pod; checksum %zu violations, %zu nodes in the snapshot)\n",
              violations, view.snapshot->nodes.size());
  return 0;
}
