// cuda-driver: an image built for a CUDA newer than the node's driver fails at its first CUDA call
// ("CUDA driver version is insufficient for CUDA runtime version").
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

struct CudaVersion {
  int major = 0;
  int minor = 0;
};

bool newer(CudaVersion a, CudaVersion b) {
  return a.major > b.major || (a.major == b.major && a.minor > b.minor);
}

// "12.1", "12.1.0-runtime-ubuntu22.04": a CUDA major.minor at the start of `s`.
std::optional<CudaVersion> version_at(std::string_view s) {
  CudaVersion v;
  auto [p1, e1] = std::from_chars(s.data(), s.data() + s.size(), v.major);
  if (e1 != std::errc{} || p1 == s.data() || p1 == s.data() + s.size() || *p1 != '.') return std::nullopt;
  auto [p2, e2] = std::from_chars(p1 + 1, s.data() + s.size(), v.minor);
  if (e2 != std::errc{} || p2 == p1 + 1 || v.major < 7 || v.major > 20) return std::nullopt;
  return v;
}

// "…-cuda12.1-…", "…cuda11.7…", and nvidia/cuda:12.1.0-runtime-ubuntu22.04 style tags.
std::optional<CudaVersion> cuda_of_image(std::string_view image) {
  const std::string img = lower(image);
  for (std::size_t at = img.find("cuda"); at != std::string::npos; at = img.find("cuda", at + 4)) {
    if (auto v = version_at(std::string_view(img).substr(at + 4))) return v;
  }
  const auto colon = img.rfind(':');
  const auto slash = img.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    const std::string_view repo = std::string_view(img).substr(0, colon);
    if (repo.ends_with("/cuda") || repo == "cuda") return version_at(std::string_view(img).substr(colon + 1));
  }
  return std::nullopt;
}

// The CUDA an image is built for: its tag's, else the policy's table of image families whose tags do not
// say it (NGC's nvcr.io/nvidia/pytorch:24.01-py3, vllm/vllm-openai:v0.4.0).
std::optional<CudaVersion> cuda_of(const CudaDriver& cfg, std::string_view image) {
  if (auto v = cuda_of_image(image)) return v;
  // The longest matching pattern is the most specific ("v0.20.*-cu129*" over "v0.20.*"), whatever the order.
  const std::string* best = nullptr;
  std::size_t best_length = 0;
  for (const auto& [pattern, version] : cfg.image_cuda) {
    if (pattern.size() >= best_length && glob_match(pattern, image)) {
      best = &version;
      best_length = pattern.size();
    }
  }
  return best != nullptr ? version_at(*best) : std::nullopt;
}

// A driver version as node labels carry it: major.minor (revisions are ignored: labels rarely carry them).
struct Driver {
  std::int64_t major = 0;
  std::int64_t minor = 0;
};

bool at_least(Driver have, Driver floor) {
  return have.major > floor.major || (have.major == floor.major && have.minor >= floor.minor);
}

// Minimum Linux driver per CUDA toolkit release, with which every feature of that release works (CUDA
// Toolkit release notes, table 3).
struct DriverFloor {
  CudaVersion cuda;
  Driver driver;
};
constexpr std::array<DriverFloor, 19> kDriverTable{{
    {{11, 0}, {450, 36}}, {{11, 1}, {455, 23}}, {{11, 2}, {460, 27}}, {{11, 3}, {465, 19}},
    {{11, 4}, {470, 42}}, {{11, 5}, {495, 29}}, {{11, 6}, {510, 39}}, {{11, 7}, {515, 43}},
    {{11, 8}, {520, 61}}, {{12, 0}, {525, 60}}, {{12, 1}, {530, 30}}, {{12, 2}, {535, 54}},
    {{12, 3}, {545, 23}}, {{12, 4}, {550, 54}}, {{12, 5}, {555, 42}}, {{12, 6}, {560, 28}},
    {{12, 8}, {570, 26}}, {{12, 9}, {575, 51}}, {{13, 0}, {580, 65}},
}};

// Minor-version compatibility (CUDA Compatibility guide, "Minor Version Compatibility"; CUDA Toolkit release
// notes, table 2): an application built with any toolkit of a CUDA major runs on every driver from that
// major's first release on: 11.x from 450.80.02 (11.1 on), 12.x from 525.60.13, 13.x from 580.65.06.
constexpr std::array<std::pair<int, Driver>, 3> kMajorFloor{
    {{11, {450, 80}}, {12, {525, 60}}, {13, {580, 65}}}};

// What an image's CUDA asks of a driver: `runs`, below which its first CUDA call fails; `full`, below which
// it runs under minor-version compatibility without the newer toolkit's driver features.
struct Floors {
  Driver runs;
  Driver full;
};

std::optional<Floors> floors_for(CudaVersion v) {
  const auto major = std::find_if(kMajorFloor.begin(), kMajorFloor.end(),
                                  [&](const auto& entry) { return entry.first == v.major; });
  if (major == kMajorFloor.end()) return std::nullopt;  // a major the table does not know yet
  Floors out{major->second, major->second};
  for (const DriverFloor& f : kDriverTable) {
    if (f.cuda.major == v.major && f.cuda.minor <= v.minor) out.full = f.driver;
  }
  if (v.major == 11 && v.minor == 0) out.runs = out.full;  // 11.0 predates minor-version compatibility
  return out;
}

// The newest CUDA a GPU container's image is built for, and the drivers it needs.
struct DriverNeed {
  CudaVersion cuda;
  std::string image;
  Floors floors;
  // NGC images carry the CUDA forward-compatibility libraries, which let data-centre GPUs run a newer CUDA
  // on an older driver branch: a driver below `runs` is then not a certain failure.
  bool forward_compatible = false;
};

std::optional<DriverNeed> need_of(const RuleContext& ctx) {
  std::optional<CudaVersion> newest;
  std::string image;
  for (const k8s::Container& c : ctx.pod().containers) {
    if (ctx.gpu_units(c) <= 0) continue;
    if (auto v = cuda_of(ctx.rules().cuda_driver, c.image); v && (!newest || newer(*v, *newest))) {
      newest = v;
      image = c.image;
    }
  }
  if (!newest) return std::nullopt;
  const auto floors = floors_for(*newest);
  if (!floors) return std::nullopt;
  const bool ngc = lower(image).starts_with("nvcr.io/nvidia/");
  return DriverNeed{*newest, std::move(image), *floors, ngc};
}

// The drivers of the GPU nodes the pod's resources point at, as their labels say.
struct Drivers {
  std::map<std::string, std::size_t> versions;  // "535.104" → nodes
  std::map<std::string, std::size_t> older;     // below `runs`
  std::map<std::string, std::size_t> partial;   // from `runs` to below `full`: minor-version compatibility
  std::size_t labelled = 0;
  std::size_t running = 0;  // at least `runs`
};

Drivers drivers_for(const RuleContext& ctx, const Floors& floors) {
  const CudaDriver& cfg = ctx.rules().cuda_driver;
  Drivers out;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node& node = ctx.cluster()->nodes[group.first];
    const auto major = int_label(node, cfg.major_label);
    const auto minor = int_label(node, cfg.minor_label);
    if (!major) continue;
    out.labelled += group.count;
    const std::string version = std::to_string(*major) + "." + (minor ? std::to_string(*minor) : "?");
    out.versions[version] += group.count;
    // An unknown minor counts as the floor's when the major is the floor's: unsure is never a denial.
    const Driver have{*major, minor.value_or(std::numeric_limits<std::int64_t>::max())};
    if (!at_least(have, floors.runs)) {
      out.older[version] += group.count;
      continue;
    }
    out.running += group.count;
    if (!at_least(have, floors.full)) out.partial[version] += group.count;
  }
  return out;
}

std::string cuda_text(CudaVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::string driver_text(Driver d) {
  return std::to_string(d.major) + "." + std::to_string(d.minor);
}

std::string nodes_text(const std::map<std::string, std::size_t>& versions) {
  std::string out;
  for (const auto& [version, count] : versions) {
    out += (out.empty() ? "" : ", ") + version + " (" + std::to_string(count) +
           (count == 1 ? " node)" : " nodes)");
  }
  return out;
}

// Keeps the pod on nodes whose driver runs its CUDA: a major above the floor's, or the floor's major and a
// minor at least its minor.
void require_driver(RuleContext& ctx, const DriverNeed& need) {
  using nlohmann::json;
  const CudaDriver& cfg = ctx.rules().cuda_driver;
  const Driver floor = need.floors.runs;
  const std::string major = std::to_string(floor.major);
  const std::vector<json> alternatives{
      json::array({{{"key", cfg.major_label}, {"operator", "Gt"}, {"values", {major}}}}),
      json::array(
          {{{"key", cfg.major_label}, {"operator", "In"}, {"values", {major}}},
           {{"key", cfg.minor_label}, {"operator", "Gt"}, {"values", {std::to_string(floor.minor - 1)}}}})};
  if (require_node_affinity(ctx.edit(spec_part("affinity")), alternatives)) {
    ctx.fixed("spec.affinity.nodeAffinity", "required node affinity on " + cfg.major_label +
                                                " for a driver ≥ " + driver_text(floor) + " (CUDA " +
                                                cuda_text(need.cuda) + ")");
  }
}

// Drivers below the CUDA major's floor: the first CUDA call fails ("CUDA driver version is insufficient for
// CUDA runtime version"), unless the image brings the forward-compatibility libraries (then only unsure).
void report_old_drivers(RuleContext& ctx, const DriverNeed& need, const Drivers& drivers) {
  const std::string cuda = cuda_text(need.cuda);
  const std::string floor = driver_text(need.floors.runs);
  const std::string what = drivers.running == 0 ? "no GPU node has it" : "some GPU nodes do not";
  const std::string major = std::to_string(need.cuda.major) + ".x";
  std::string message =
      "image " + need.image + " is built for CUDA " + cuda + "; CUDA " + major +
      " needs an NVIDIA driver ≥ " + floor + " (minor-version compatibility), and " + what +
      " (drivers here: " + nodes_text(drivers.versions) +
      "). On an older driver CUDA fails at "
      "its first call with \"CUDA driver version is insufficient for CUDA runtime version\".";
  Action action = ctx.rules().cuda_driver.action;
  if (need.forward_compatible) {
    message +=
        " NGC images carry the CUDA forward-compatibility libraries, with which data-centre GPUs (A100, "
        "H100, L4, T4, ...) on a supported driver branch run it anyway, so gpuadmit only warns.";
    action = std::min(action, Action::kWarn);
  }
  message += "\nFix: use an image built for CUDA " + std::to_string(need.cuda.major - 1) +
             ".x or older, or ask for nodes with a driver ≥ " + floor + ".";
  ctx.report(action, "spec.containers", std::move(message),
             "image built for CUDA " + cuda + " needs driver ≥ " + floor + "; " + what + " (" +
                 nodes_text(drivers.older) + " older)");
}

// Drivers from the major's floor to below the toolkit's own: the image runs under minor-version
// compatibility. Never a denial: what is missing is a feature, not the application.
void report_partial_drivers(RuleContext& ctx, const DriverNeed& need, const Drivers& drivers) {
  const std::string cuda = cuda_text(need.cuda);
  const std::string full = driver_text(need.floors.full);
  ctx.report(
      std::min(ctx.rules().cuda_driver.action, Action::kWarn), "spec.containers",
      "image " + need.image + " is built for CUDA " + cuda +
          ", whose every feature needs an NVIDIA driver ≥ " + full + "; on " + nodes_text(drivers.partial) +
          " it runs under CUDA minor-version compatibility: PTX built by the newer toolkit cannot be "
          "JIT-compiled (\"the provided PTX was compiled with an unsupported toolchain\"), and APIs that "
          "need the newer driver return cudaErrorCallRequiresNewerDriver.\nFix: nothing, if the image ships "
          "code for the GPUs' architectures (SASS, as PyTorch's and NGC's wheels do); otherwise use an image "
          "built for the drivers' CUDA, or ask for nodes with a driver ≥ " +
          full + ".",
      "CUDA " + cuda + " image: every feature needs driver ≥ " + full + "; runs in compatibility mode on " +
          nodes_text(drivers.partial));
}

}  // namespace

void rule_cuda_driver(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const std::optional<DriverNeed> need = need_of(ctx);
  if (!need) return;
  const Drivers drivers = drivers_for(ctx, need->floors);
  if (drivers.labelled == 0) return;  // unknown
  if (!drivers.older.empty()) {
    const bool steer = drivers.running > 0 && !need->forward_compatible &&
                       ctx.rules().cuda_driver.action == Action::kEnforce;
    // Validate allows: the affinity mutate added keeps the pod on the nodes that run it. A partial pod gets
    // no affinity (its runtime's would be replaced), so it is told instead.
    if (steer && ctx.can_fix_pod()) {
      require_driver(ctx, *need);
    } else if (!steer || ctx.partial()) {
      report_old_drivers(ctx, *need, drivers);
      return;
    }
  }
  if (!drivers.partial.empty()) report_partial_drivers(ctx, *need, drivers);
}

void read_cuda_driver(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.cuda_driver.action);
  r.string("majorLabel", rules.cuda_driver.major_label);
  r.string("minorLabel", rules.cuda_driver.minor_label);
  r.string_map("imageCuda", "image pattern to the CUDA version it is built for",
               rules.cuda_driver.image_cuda);
  for (const auto& [pattern, version] : rules.cuda_driver.image_cuda) {
    if (!version_at(version)) {
      std::string message = "imageCuda: \"";
      message.append(pattern).append("\": \"").append(version).append(
          "\" is not a CUDA version such as 12.3");
      r.error(message);
    }
  }
}

}  // namespace gpuadmit::policy
