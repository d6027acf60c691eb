// cuda-driver: an image built for a CUDA newer than the node's driver fails at its first CUDA call
// ("CUDA driver version is insufficient for CUDA runtime version").
#include <array>
#include <charconv>
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

// Minimum Linux driver per CUDA toolkit release (NVIDIA CUDA Toolkit release notes, table 3), as
// major.minor of the driver; revisions are ignored because the node labels rarely carry them reliably.
struct DriverFloor {
  CudaVersion cuda;
  int driver_major;
  int driver_minor;
};
constexpr std::array<DriverFloor, 19> kDriverTable{{
    {{11, 0}, 450, 36}, {{11, 1}, 455, 23}, {{11, 2}, 460, 27}, {{11, 3}, 465, 19}, {{11, 4}, 470, 42},
    {{11, 5}, 495, 29}, {{11, 6}, 510, 39}, {{11, 7}, 515, 43}, {{11, 8}, 520, 61}, {{12, 0}, 525, 60},
    {{12, 1}, 530, 30}, {{12, 2}, 535, 54}, {{12, 3}, 545, 23}, {{12, 4}, 550, 54}, {{12, 5}, 555, 42},
    {{12, 6}, 560, 28}, {{12, 8}, 570, 26}, {{12, 9}, 575, 51}, {{13, 0}, 580, 65},
}};

std::optional<DriverFloor> floor_for(CudaVersion v) {
  std::optional<DriverFloor> best;
  for (const DriverFloor& f : kDriverTable) {
    if (f.cuda.major < v.major || (f.cuda.major == v.major && f.cuda.minor <= v.minor)) best = f;
  }
  if (best && best->cuda.major != v.major) return std::nullopt;  // a major the table does not know yet
  return best;
}

// The newest CUDA a GPU container's image is built for, and the driver it needs.
struct DriverNeed {
  CudaVersion cuda;
  std::string image;
  DriverFloor floor;
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
  const auto floor = floor_for(*newest);
  if (!floor) return std::nullopt;
  return DriverNeed{*newest, std::move(image), *floor};
}

// The drivers of the GPU nodes the pod's resources point at, as their labels say.
struct Drivers {
  std::map<std::string, std::size_t> versions;  // "535.104" → nodes
  std::size_t labelled = 0;
  std::size_t qualifying = 0;  // new enough for the image
};

Drivers drivers_for(const RuleContext& ctx, const DriverFloor& floor) {
  const CudaDriver& cfg = ctx.rules().cuda_driver;
  Drivers out;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node& node = ctx.cluster()->nodes[group.first];
    const auto major = int_label(node, cfg.major_label);
    const auto minor = int_label(node, cfg.minor_label);
    if (!major) continue;
    out.labelled += group.count;
    out.versions[std::to_string(*major) + "." + (minor ? std::to_string(*minor) : std::string("?"))] +=
        group.count;
    if (*major > floor.driver_major ||
        (*major == floor.driver_major && minor && *minor >= floor.driver_minor)) {
      out.qualifying += group.count;
    }
  }
  return out;
}

std::string cuda_text(const DriverNeed& need) {
  return std::to_string(need.cuda.major) + "." + std::to_string(need.cuda.minor);
}

std::string driver_text(const DriverNeed& need) {
  return std::to_string(need.floor.driver_major) + "." + std::to_string(need.floor.driver_minor);
}

// Keeps the pod on nodes whose driver is new enough: a major above the floor's, or the floor's major and a
// minor at least its minor.
void require_driver(RuleContext& ctx, const DriverNeed& need) {
  using nlohmann::json;
  const CudaDriver& cfg = ctx.rules().cuda_driver;
  const std::string major = std::to_string(need.floor.driver_major);
  const std::vector<json> alternatives{
      json::array({{{"key", cfg.major_label}, {"operator", "Gt"}, {"values", {major}}}}),
      json::array({{{"key", cfg.major_label}, {"operator", "In"}, {"values", {major}}},
                   {{"key", cfg.minor_label},
                    {"operator", "Gt"},
                    {"values", {std::to_string(need.floor.driver_minor - 1)}}}})};
  if (require_node_affinity(ctx.edit(spec_part("affinity")), alternatives)) {
    ctx.fixed("spec.affinity.nodeAffinity", "required node affinity on " + cfg.major_label +
                                                " for a driver ≥ " + driver_text(need) + " (CUDA " +
                                                cuda_text(need) + ")");
  }
}

void report_old_drivers(RuleContext& ctx, const DriverNeed& need, const Drivers& drivers) {
  std::string present;
  for (const auto& [version, count] : drivers.versions) {
    present += (present.empty() ? "" : ", ") + version + " (" + std::to_string(count) +
               (count == 1 ? " node)" : " nodes)");
  }
  const std::string cuda = cuda_text(need);
  const std::string driver = driver_text(need);
  const std::string what = drivers.qualifying == 0 ? "no GPU node has it" : "some GPU nodes do not";
  ctx.report(
      ctx.rules().cuda_driver.action, "spec.containers",
      "image " + need.image + " is built for CUDA " + cuda + ", which needs an NVIDIA driver ≥ " + driver +
          "; " + what + " (drivers here: " + present +
          "). On an older driver CUDA fails at start with \"the provided PTX was "
          "compiled with an unsupported toolchain\" or \"CUDA driver version is insufficient\".\nFix: use an "
          "image built for the CUDA the drivers support, or ask for nodes with a newer driver.",
      "image built for CUDA " + cuda + " needs driver ≥ " + driver + "; " + what + " (" + present + ")");
}

}  // namespace

void rule_cuda_driver(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const std::optional<DriverNeed> need = need_of(ctx);
  if (!need) return;
  const Drivers drivers = drivers_for(ctx, need->floor);
  if (drivers.labelled == 0 || drivers.qualifying == drivers.labelled) return;  // unknown, or all new enough
  if (drivers.qualifying > 0 && ctx.rules().cuda_driver.action == Action::kEnforce) {
    // Validate allows: the affinity mutate added keeps the pod on the qualifying nodes. A partial pod gets
    // no affinity (its runtime's would be replaced), so it is told instead.
    if (ctx.can_fix_pod()) {
      require_driver(ctx, *need);
      return;
    }
    if (!ctx.partial()) return;
  }
  report_old_drivers(ctx, *need, drivers);
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
