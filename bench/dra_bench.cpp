// DRA view benchmark: what a cluster whose GPUs are published as ResourceSlices (NVIDIA's DRA driver) costs
// the cluster view (#19, item 1). 5,000 nodes (--nodes) with a slice of 8 GPUs each (--gpus), each device
// with the attributes of the driver (type, uuid, productName, brand, architecture, cudaComputeCapability,
// driverVersion, cudaDriverVersion) and its memory capacity, as tests/e2e's fake slices have them; and
// 5,000 allocated ResourceClaims (--claims), a claim per GPU pod.
//   - the slices' LIST parsed into the watcher's typed cache: time, heap, bytes per slice and per device,
//     and how many device views the slices share;
//   - the claims the same way, and the snapshot built from all of it (the DRA indexes): time and heap;
//   - a real ClusterWatcher syncing them from an in-process API server that pages every LIST at 500: the heap
//     after and at the peak (what the JSON of a page costs while it is parsed), then a relist of the slices
//     after 410 Gone (the old cache and the new list alive together).
// Memory is the heap in use (heap.hpp) with the objects alive. Prints numbers; asserts nothing. Run: make
// bench.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/cluster_watcher.hpp"
#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/snapshot_store.hpp"
#include "heap.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace gpuadmit;
using bench::heap_mib;
using bench::HeapPeak;

struct Shape {
  int nodes = 5000;
  int gpus = 8;
  int claims = 5000;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string node_name(int i) {
  return "dra-gpu-" + std::to_string(i);
}

std::string hex(unsigned value, int digits) {
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int d = digits - 1; d >= 0; --d, value >>= 4U)
    out[static_cast<std::size_t>(d)] = "0123456789abcdef"[value & 0xFU];
  return out;
}

// A device as NVIDIA's DRA driver publishes it: four nodes in five have A100s, the rest H100s.
json make_device(int node, int k) {
  const bool a100 = node % 5 != 4;
  const unsigned seed = static_cast<unsigned>(node) * 8U + static_cast<unsigned>(k);
  const std::string uuid = "GPU-" + hex(seed * 2654435761U, 8) + "-" + hex(seed, 4) + "-" + hex(~seed, 4) +
                           "-" + hex(seed * 40503U, 4) + "-" + hex(seed * 69069U, 12);
  return {{"name", "gpu-" + std::to_string(k)},
          {"attributes",
           {{"type", {{"string", "gpu"}}},
            {"uuid", {{"string", uuid}}},
            {"productName", {{"string", a100 ? "NVIDIA A100-SXM4-80GB" : "NVIDIA H100 80GB HBM3"}}},
            {"brand", {{"string", "Nvidia"}}},
            {"architecture", {{"string", a100 ? "Ampere" : "Hopper"}}},
            {"cudaComputeCapability", {{"version", a100 ? "8.0.0" : "9.0.0"}}},
            {"driverVersion", {{"version", "580.95.5"}}},
            {"cudaDriverVersion", {{"version", "13.0.0"}}}}},
          {"capacity", {{"memory", {{"value", "80Gi"}}}}}};
}

// A slice as the API server lists it: metadata with the owner (the Node) and the driver's managed fields.
json make_slice(int i, const Shape& shape) {
  const std::string node = node_name(i);
  json devices = json::array();
  for (int k = 0; k < shape.gpus; ++k) devices.push_back(make_device(i, k));
  return {{"metadata",
           {{"name", node + "-gpu.nvidia.com-" + hex(static_cast<unsigned>(i) * 7919U, 5)},
            {"generateName", node + "-gpu.nvidia.com-"},
            {"uid", "0f1c8f9e-0000-4000-8000-" + std::to_string(100000000000LL + i)},
            {"resourceVersion", std::to_string(2000 + i)},
            {"creationTimestamp", "2026-11-01T08:00:00Z"},
            {"ownerReferences",
             {{{"apiVersion", "v1"},
               {"kind", "Node"},
               {"name", node},
               {"uid", "6f1c8f9e-0000-4000-8000-" + std::to_string(100000000000LL + i)},
               {"controller", true}}}},
            {"managedFields",
             {{{"manager", "gpu-kubelet-plugin"},
               {"operation", "Update"},
               {"apiVersion", "resource.k8s.io/v1"},
               {"time", "2026-11-01T08:00:00Z"},
               {"fieldsType", "FieldsV1"},
               {"fieldsV1", {{"f:spec", {{"f:devices", json::object()}, {"f:driver", json::object()}}}}}}}}}},
          {"spec",
           {{"driver", "gpu.nvidia.com"},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", devices}}}};
}

json make_node(int i) {
  return {
      {"metadata",
       {{"name", node_name(i)},
        {"resourceVersion", std::to_string(1000 + i)},
        {"labels", {{"kubernetes.io/hostname", node_name(i)}, {"nvidia.com/dra-kubelet-plugin", "true"}}}}},
      {"status",
       {{"allocatable", {{"cpu", "96"}, {"memory", "1056Gi"}, {"pods", "110"}}},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

// An allocated claim made from a template for one pod, reserved for it.
json make_claim(int i) {
  const std::string pod = "train-" + std::to_string(i);
  const std::string node = node_name(i % 5000);
  return {
      {"metadata",
       {{"name", pod + "-gpu-" + hex(static_cast<unsigned>(i) * 2654435761U, 5)},
        {"namespace", "ml-team-" + std::to_string(i % 50)},
        {"uid", "1f1c8f9e-0000-4000-8000-" + std::to_string(100000000000LL + i)},
        {"resourceVersion", std::to_string(90000 + i)},
        {"annotations", {{"resource.kubernetes.io/pod-claim-name", "gpu"}}},
        {"ownerReferences",
         {{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"name", pod},
           {"uid", "pod-uid"},
           {"controller", true}}}}}},
      {"spec",
       {{"devices",
         {{"requests",
           {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.nvidia.com"}, {"count", 1}}}}}}}}}},
      {"status",
       {{"allocation",
         {{"devices",
           {{"results",
             {{{"request", "gpu"}, {"driver", "gpu.nvidia.com"}, {"pool", node}, {"device", "gpu-0"}}}}}},
          {"nodeSelector",
           {{"nodeSelectorTerms",
             {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}}}}},
        {"reservedFor", {{{"resource", "pods"}, {"name", pod}, {"uid", "pod-uid"}}}}}}};
}

const char* const kDeviceClasses = R"([
  {"metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],"extendedResourceName":"nvidia.com/gpu"}},
  {"metadata":{"name":"mig.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}}
])";

// The collections of `shape`, each item serialized as the API server sends it.
std::map<std::string, std::vector<std::string>> collections(const Shape& shape) {
  std::map<std::string, std::vector<std::string>> out;
  const auto path = [](cluster::Kind kind) { return std::string(cluster::info(kind).path); };
  for (int i = 0; i < shape.nodes; ++i) {
    out[path(cluster::Kind::kNode)].push_back(make_node(i).dump());
    out[path(cluster::Kind::kResourceSlice)].push_back(make_slice(i, shape).dump());
  }
  for (int i = 0; i < shape.claims; ++i)
    out[path(cluster::Kind::kResourceClaim)].push_back(make_claim(i).dump());
  for (const json& c : json::parse(kDeviceClasses))
    out[path(cluster::Kind::kDeviceClass)].push_back(c.dump());
  return out;
}

// An API server in the process: every collection in pages (limit/continue), watches that stay open and
// silent, but the slices' watch, which answers 410 Gone once `gone` is set (the reflector lists again).
class PagedTransport final : public cluster::ApiTransport {
 public:
  explicit PagedTransport(std::map<std::string, std::vector<std::string>> items) : items_(std::move(items)) {}

  Result<cluster::ApiResponse> get(std::string_view target, std::stop_token /*stop*/) override {
    const std::string path(target.substr(0, target.find('?')));
    const auto found = items_.find(path);
    const std::vector<std::string> none;
    const std::vector<std::string>& items = found == items_.end() ? none : found->second;
    const std::size_t limit = number_after(target, "limit=", items.size());
    const std::size_t first = number_after(target, "continue=", 0);
    const std::size_t last = std::min(items.size(), first + limit);
    std::string body = R"({"kind":"List","metadata":{"resourceVersion":"99999")";
    if (last < items.size()) body += R"(,"continue":")" + std::to_string(last) + '"';
    body += R"(},"items":[)";
    for (std::size_t i = first; i < last; ++i) body.append(i == first ? "" : ",").append(items[i]);
    body += "]}";
    return cluster::ApiResponse{200, std::move(body)};
  }

  Result<cluster::ApiResponse> watch(std::string_view target, std::chrono::seconds /*deadline*/,
                                     const cluster::WatchCallbacks& callbacks,
                                     std::stop_token stop) override {
    callbacks.opened();
    const bool slices = target.starts_with(cluster::info(cluster::Kind::kResourceSlice).path);
    while (!stop.stop_requested()) {
      if (slices && gone.exchange(false)) {
        callbacks.line(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
        return cluster::ApiResponse{200, ""};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
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

  std::atomic<bool> gone{false};

 private:
  static std::size_t number_after(std::string_view target, std::string_view name, std::size_t otherwise) {
    const std::size_t at = target.find(name);
    if (at == std::string_view::npos) return otherwise;
    return std::strtoull(std::string(target.substr(at + name.size())).c_str(), nullptr, 10);
  }

  std::map<std::string, std::vector<std::string>> items_;
};

// The items of `kind` parsed into typed objects, as the reflector caches them.
cluster::SnapshotStore::Entries parse_all(cluster::Kind kind, const std::vector<std::string>& items) {
  cluster::SnapshotStore::Entries entries;
  entries.reserve(items.size());
  for (const std::string& text : items) {
    const json item = json::parse(text);
    auto object = cluster::parse_object(kind, item);
    auto key = cluster::object_key(item);
    if (!object || !key) {
      std::fprintf(stderr, "%s did not parse: %s\n", std::string(cluster::info(kind).kind).c_str(),
                   object ? "no name" : object.error().message.c_str());
      std::exit(1);
    }
    entries.emplace_back(std::move(*key), std::move(*object));
  }
  return entries;
}

std::size_t bytes_of(const std::vector<std::string>& items) {
  std::size_t bytes = 0;
  for (const std::string& item : items) bytes += item.size() + 1;
  return bytes;
}

// How many distinct device views the cached slices hold.
std::size_t distinct_views(const policy::ClusterSnapshot& snapshot) {
  std::set<const k8s::DeviceView*> views;
  for (const k8s::ResourceSlice& slice : snapshot.resource_slices) {
    for (const k8s::Device& device : slice.devices) views.insert(device.view.get());
  }
  return views.size();
}

// 1-3: the cache and the snapshot, measured object by object.
void measure_cache(const Shape& shape, const std::map<std::string, std::vector<std::string>>& items) {
  const auto of = [&](cluster::Kind kind) -> const std::vector<std::string>& {
    static const std::vector<std::string> none;
    const auto it = items.find(std::string(cluster::info(kind).path));
    return it == items.end() ? none : it->second;
  };
  cluster::SnapshotStore store;
  store.replace(cluster::Kind::kNode, parse_all(cluster::Kind::kNode, of(cluster::Kind::kNode)));
  store.replace(cluster::Kind::kDeviceClass,
                parse_all(cluster::Kind::kDeviceClass, of(cluster::Kind::kDeviceClass)));
  const std::size_t devices = static_cast<std::size_t>(shape.nodes) * static_cast<std::size_t>(shape.gpus);

  double heap = heap_mib();
  auto start = Clock::now();
  store.replace(cluster::Kind::kResourceSlice,
                parse_all(cluster::Kind::kResourceSlice, of(cluster::Kind::kResourceSlice)));
  const double slices_ms = ms_since(start);
  const double slices_mib = heap_mib() - heap;

  heap = heap_mib();
  start = Clock::now();
  store.replace(cluster::Kind::kResourceClaim,
                parse_all(cluster::Kind::kResourceClaim, of(cluster::Kind::kResourceClaim)));
  const double claims_ms = ms_since(start);
  const double claims_mib = heap_mib() - heap;
  for (const cluster::Kind kind : cluster::kAllKinds) {
    if (store.stats().kinds[cluster::index(kind)].lists == 0) store.replace(kind, {});
  }

  heap = heap_mib();
  start = Clock::now();
  store.rebuild();
  const double build_ms = ms_since(start);
  const double snapshot_mib = heap_mib() - heap;
  const auto snapshot = store.snapshot();

  const double slice_json = static_cast<double>(bytes_of(of(cluster::Kind::kResourceSlice)));
  std::printf("  slices' LIST body          %8.1f MiB of JSON (%d slices, %zu devices; %.0f bytes a slice)\n",
              slice_json / (1024.0 * 1024.0), shape.nodes, devices, slice_json / shape.nodes);
  std::printf("  slices into the cache      %8.1f ms\n", slices_ms);
  std::printf(
      "  slices' cache              %8.1f MiB heap: %.0f bytes a slice, %.0f a device; %zu device views "
      "for %zu devices\n",
      slices_mib, slices_mib * 1024 * 1024 / shape.nodes,
      slices_mib * 1024 * 1024 / static_cast<double>(devices), distinct_views(*snapshot), devices);
  std::printf(
      "  claims' cache              %8.1f MiB heap (%d allocated claims, %.0f bytes each; %.1f ms to "
      "parse)\n",
      claims_mib, shape.claims, shape.claims > 0 ? claims_mib * 1024 * 1024 / shape.claims : 0.0, claims_ms);
  std::printf(
      "  snapshot build             %8.1f ms, %.1f MiB heap (%zu nodes, %zu slices, %zu slices_by_node)\n",
      build_ms, snapshot_mib, snapshot->nodes.size(), snapshot->resource_slices.size(),
      snapshot->slices_by_node.size());
  std::printf("  cache + snapshot           %8.1f MiB heap (slices, claims, snapshot)\n",
              slices_mib + claims_mib + snapshot_mib);
}

// 4: a real watcher syncing from the paged API server, then a relist of the slices.
void measure_watcher(std::map<std::string, std::vector<std::string>> items) {
  auto transport = std::make_shared<PagedTransport>(std::move(items));
  cluster::WatcherOptions options;
  options.log = cluster::null_sink();
  options.probe_interval = std::chrono::milliseconds(0);
  HeapPeak peak;
  const double before = heap_mib();
  peak.take();
  cluster::ClusterWatcher watcher(transport, options);
  const auto start = Clock::now();
  watcher.start();
  if (!watcher.wait_for_sync(std::chrono::minutes(5))) {
    std::printf("  watch: the watcher did not sync\n");
    return;
  }
  const double sync_ms = ms_since(start);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double sync_peak = peak.take() - before;
  const double synced = heap_mib() - before;
  const auto slice_stats = [&] {
    return watcher.stats().kinds[cluster::index(cluster::Kind::kResourceSlice)];
  };
  transport->gone.store(true);
  const auto relist_start = Clock::now();
  while (slice_stats().relists == 0 || !slice_stats().watching)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double relist_ms = ms_since(relist_start);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double relist_peak = peak.take() - before;
  const double after = heap_mib() - before;
  watcher.stop();
  std::printf(
      "  watcher: first sync        %8.0f ms; heap %.1f MiB after, %.1f MiB at the peak (LIST pages of "
      "500, of 100 slices)\n",
      sync_ms, synced, sync_peak);
  std::printf(
      "  watcher: slices relisted   %8.0f ms after 410 Gone; heap %.1f MiB at the peak, %.1f MiB after\n",
      relist_ms, relist_peak, after);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Shape shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--nodes" && value > 0) {
      shape.nodes = value;
    } else if (flag == "--gpus" && value > 0) {
      shape.gpus = value;
    } else if (flag == "--claims" && value >= 0) {
      shape.claims = value;
    } else {
      std::fprintf(stderr, "usage: gpuadmit_dra_bench [--nodes N] [--gpus G] [--claims C]\n");
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: gpuadmit_dra_bench [--nodes N] [--gpus G] [--claims C]\n");
    return 2;
  }
  std::printf(
      "DRA view benchmark: %d nodes with a ResourceSlice of %d GPUs each (A100 and H100), %d "
      "ResourceClaims\n",
      shape.nodes, shape.gpus, shape.claims);
  auto items = collections(shape);
  measure_cache(shape, items);
  measure_watcher(std::move(items));
  return 0;
}
