// Cluster view benchmark: what a 5,000-node cluster (or --nodes N) costs gpuadmit.
//   - parsing a LIST of 5,000 realistic GPU/CPU nodes into the watcher's typed cache;
//   - rebuilding the immutable ClusterSnapshot from that cache (what every change costs), time and heap;
//   - node-fit (and every rule) evaluated for one pod against the 5,000 nodes;
//   - the watch under churn: a real ClusterWatcher (reflector, store, rebuild thread) fed 100 node changes a
//     second (--churn-per-second, --churn-seconds) through an in-process transport; its CPU and rebuilds.
// Memory is the heap in use (tcmalloc's current_allocated_bytes, or glibc mallinfo2 uordblks + hblkhd) before
// and after, plus the process RSS delta, with the objects kept alive while measured. Prints numbers; asserts
// nothing. Run: make bench.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "heap.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace gpuadmit;
using bench::heap_mib;
using bench::HeapPeak;
using bench::rss_mib;

// The view's shape: `--nodes N` (default 5,000) and `--gpu-percent P` (default 80), GPU nodes split over
// the GPU pools in the default's proportions, the rest CPU only. GKE's largest clusters (65,000 nodes, 10 %
// GPU): --nodes 65000 --gpu-percent 10.
struct Shape {
  int nodes = 5000;
  int gpu_percent = 80;
  int churn_per_second = 100;
  int churn_seconds = 10;
};

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

json with_annotation(json pod, const std::string& key, const std::string& value) {
  pod["metadata"]["annotations"][key] = value;
  return pod;
}

json with_image(json pod, const std::string& image) {
  pod["spec"]["containers"][0]["image"] = image;
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

// The process's CPU time (user + system, every thread) in seconds.
double cpu_seconds() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// An API server in the process: the node LIST in pages (limit/continue, as the API server pages it), empty
// lists of the other kinds, and a node watch that plays `events` at a steady rate once `play` is set, then
// answers 410 Gone once `gone` is set (the reflector lists again), then stays open and silent.
class ChurnTransport final : public cluster::ApiTransport {
 public:
  ChurnTransport(std::vector<std::string> nodes, std::vector<std::string> events, int per_second)
      : nodes_(std::move(nodes)), events_(std::move(events)), per_second_(per_second) {}

  Result<cluster::ApiResponse> get(std::string_view target, std::stop_token /*stop*/) override {
    if (!is(target, cluster::Kind::kNode))
      return cluster::ApiResponse{200, R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})"};
    const std::size_t limit = number_after(target, "limit=", nodes_.size());
    const std::size_t first = number_after(target, "continue=", 0);
    const std::size_t last = std::min(nodes_.size(), first + limit);
    std::string body = R"({"kind":"NodeList","metadata":{"resourceVersion":"99999")";
    if (last < nodes_.size()) body += R"(,"continue":")" + std::to_string(last) + '"';
    body += R"(},"items":[)";
    for (std::size_t i = first; i < last; ++i) body.append(i == first ? "" : ",").append(nodes_[i]);
    body += "]}";
    return cluster::ApiResponse{200, std::move(body)};
  }

  Result<cluster::ApiResponse> watch(std::string_view target, std::chrono::seconds /*deadline*/,
                                     const cluster::WatchCallbacks& callbacks,
                                     std::stop_token stop) override {
    callbacks.opened();
    if (is(target, cluster::Kind::kNode) && !played.load()) {
      while (!stop.stop_requested() && !play.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const auto start = Clock::now();
      for (std::size_t i = 0; i < events_.size() && !stop.stop_requested(); ++i) {
        std::this_thread::sleep_until(start + std::chrono::microseconds(1'000'000LL * i / per_second_));
        if (!callbacks.line(events_[i])) return cluster::ApiResponse{200, ""};
      }
      played.store(true);
      while (!stop.stop_requested() && !gone.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      callbacks.line(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
      return cluster::ApiResponse{200, ""};
    }
    while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return make_error("stopped");
  }

  Result<cluster::ApiResponse> merge_patch(std::string_view, std::string_view, std::stop_token) override {
    return make_error("the benchmark writes nothing");
  }
  Result<cluster::ApiResponse> write(cluster::WriteVerb, std::string_view, std::string_view,
                                     std::stop_token) override {
    return make_error("the benchmark writes nothing");
  }

  [[nodiscard]] std::string endpoint() const override { return "in-process"; }

  std::atomic<bool> play{false};
  std::atomic<bool> played{false};
  std::atomic<bool> gone{false};

 private:
  static bool is(std::string_view target, cluster::Kind kind) {
    const std::string_view path = cluster::info(kind).path;
    return target.starts_with(path) && (target.size() == path.size() || target[path.size()] == '?');
  }
  static std::size_t number_after(std::string_view target, std::string_view name, std::size_t otherwise) {
    const std::size_t at = target.find(name);
    if (at == std::string_view::npos) return otherwise;
    return std::strtoull(std::string(target.substr(at + name.size())).c_str(), nullptr, 10);
  }

  std::vector<std::string> nodes_;
  std::vector<std::string> events_;
  int per_second_;
};

// Node changes as a churning cluster makes them: a node cordoned (spec.unschedulable and the
// node.kubernetes.io/unschedulable taint), the one cordoned 50 changes earlier uncordoned, and every tenth
// change a relabel. Each event changes what the rules read, so none is skipped as a heartbeat.
std::vector<std::string> churn_events(const json& list, std::size_t count) {
  const json& items = list["items"];
  std::vector<json> nodes(items.begin(), items.end());
  std::vector<std::string> out;
  out.reserve(count);
  const std::size_t n = nodes.size();
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t cordon = (k / 2 * 7919) % n;
    const std::size_t uncordon = ((k / 2 + n - 25) * 7919) % n;
    json& node = nodes[k % 2 == 0 ? cordon : uncordon];
    json& spec = node["spec"];
    const bool on = k % 2 == 0;
    spec["unschedulable"] = on;
    json taints = json::array();
    for (const json& t : spec["taints"]) {
      if (t["key"] != "node.kubernetes.io/unschedulable") taints.push_back(t);
    }
    if (on) taints.push_back({{"key", "node.kubernetes.io/unschedulable"}, {"effect", "NoSchedule"}});
    spec["taints"] = taints;
    if (k % 10 == 0) node["metadata"]["labels"]["gpuadmit.io/churn-round"] = std::to_string(k / 10 % 3);
    node["metadata"]["resourceVersion"] = std::to_string(100000 + k);
    out.push_back(json{{"type", "MODIFIED"}, {"object", node}}.dump());
  }
  return out;
}

// The watch as a real ClusterWatcher runs it: the first sync (heap peak), `count` node changes at
// churn_per_second (CPU, rebuilds), then a relist after 410 Gone (heap peak: the old cache and the new
// LIST are alive together).
void run_churn(const Shape& shape, json list) {
  const std::size_t count = static_cast<std::size_t>(shape.churn_per_second) * shape.churn_seconds;
  std::vector<std::string> events = churn_events(list, count);
  std::vector<std::string> nodes;
  for (const json& item : list["items"]) nodes.push_back(item.dump());
  list = json();
  auto transport =
      std::make_shared<ChurnTransport>(std::move(nodes), std::move(events), shape.churn_per_second);
  cluster::WatcherOptions options;
  options.log = cluster::null_sink();
  options.probe_interval = std::chrono::milliseconds(0);
  HeapPeak peak;
  const double heap_before = heap_mib();
  peak.take();
  cluster::ClusterWatcher watcher(transport, options);
  watcher.start();
  if (!watcher.wait_for_sync(std::chrono::minutes(5))) {
    std::printf("  churn: the watcher did not sync\n");
    return;
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the first snapshot's aftermath settles
  const double sync_peak = peak.take() - heap_before;
  const double synced = heap_mib() - heap_before;
  const std::uint64_t rebuilds_before = watcher.stats().snapshot_rebuilds;
  const double cpu_before = cpu_seconds();
  const auto start = Clock::now();
  transport->play.store(true);
  while (!transport->played.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the last change's rebuild
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = cpu_seconds() - cpu_before;
  const std::uint64_t rebuilds = watcher.stats().snapshot_rebuilds - rebuilds_before;

  const double before_relist = heap_mib() - heap_before;
  peak.take();
  const auto relist_start = Clock::now();
  transport->gone.store(true);
  const auto node_stats = [&] { return watcher.stats().kinds[cluster::index(cluster::Kind::kNode)]; };
  while (node_stats().relists == 0 || !node_stats().watching)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double relist_ms = ms_since(relist_start);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the rebuild after it, the old snapshot freed
  const double relist_peak = peak.take() - heap_before;
  const double after_relist = heap_mib() - heap_before;
  watcher.stop();
  std::printf(
      "  watch: first sync          heap %.1f MiB after, %.1f MiB at the peak (paged LIST, 500 a page)\n",
      synced, sync_peak);
  std::printf(
      "  watch under churn          %d node changes/s for %d s: %.1f %% of one core (%.2f s CPU in "
      "%.1f s), %llu rebuilds, %.1f ms CPU per change\n",
      shape.churn_per_second, shape.churn_seconds, 100.0 * cpu / wall, cpu, wall,
      static_cast<unsigned long long>(rebuilds), 1000.0 * cpu / static_cast<double>(count));
  std::printf(
      "  watch: relist after 410    %.0f ms; heap %.1f MiB before, %.1f MiB at the peak, %.1f MiB after\n",
      relist_ms, before_relist, relist_peak, after_relist);
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
    } else if (flag == "--churn-per-second" && value > 0) {
      shape.churn_per_second = value;
    } else if (flag == "--churn-seconds" && value >= 0) {
      shape.churn_seconds = value;
    } else {
      std::fprintf(stderr,
                   "usage: gpuadmit_cluster_bench [--nodes N] [--gpu-percent P] [--churn-per-second R] "
                   "[--churn-seconds S]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: gpuadmit_cluster_bench [--nodes N] [--gpu-percent P] [--churn-per-second R] "
                 "[--churn-seconds S]\n");
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
      {"8 GPUs of type a100 (gpu-type reads nodes)",
       with_annotation(make_pod("8"), "gpuadmit.io/gpu-type", "a100")},
      {"1 GPU, a CUDA 12.4 image (cuda-driver too)",
       with_image(make_pod("1"), "nvcr.io/nvidia/cuda:12.4.0-runtime-ubuntu22.04")},
  };
  std::size_t violations = 0;
  std::printf(
      "  per pod (validate)                             node-fit only | all rules, with view | all rules, no "
      "view\n");
  for (const Case& c : cases) {
    int n1 = 0;
    int n2 = 0;
    int n3 = 0;
    const double fit = evaluate_us(c.pod, *node_fit_only, &view, &violations, &n1);
    const double all = evaluate_us(c.pod, all_rules, &view, &violations, &n2);
    const double blind = evaluate_us(c.pod, all_rules, nullptr, &violations, &n3);
    std::printf("    %-44s %10.2f us | %14.2f us     | %8.2f us   (rounds %d/%d/%d)\n", c.what, fit, all,
                blind, n1, n2, n3);
  }
  std::printf("  (target: node-fit < 100 us per pod; checksum %zu violations, %zu nodes in the snapshot)\n",
              violations, view.snapshot->nodes.size());

  // 4. The watch under churn, on a watcher of its own (the store above is done with).
  if (shape.churn_seconds > 0) run_churn(shape, make_list(shape));
  return 0;
}
