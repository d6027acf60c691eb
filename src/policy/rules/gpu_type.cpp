// gpu-type and cuda-driver: steer a GPU pod to the GPUs it needs, using labels that exist in this cluster.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kGpuType = "gpu-type";
constexpr std::string_view kCudaDriver = "cuda-driver";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

const std::string* annotation(const k8s::Pod& pod, std::string_view key) {
  const auto it = pod.meta.annotations.find(key);
  return it == pod.meta.annotations.end() ? nullptr : &it->second;
}

// Nodes that offer any of the GPU resources the pod asks for (index lookups, no full scan).
std::vector<const k8s::Node*> gpu_nodes_for(const RuleContext& ctx) {
  std::set<std::size_t> positions;
  for (const k8s::Container& c : ctx.pod().containers) {
    for (const auto& [name, q] : c.resources.limits) {
      if (!ctx.rules().is_gpu_resource(name)) continue;
      if (const auto it = ctx.cluster()->nodes_by_resource.find(name);
          it != ctx.cluster()->nodes_by_resource.end()) {
        positions.insert(it->second.begin(), it->second.end());
      }
    }
  }
  std::vector<const k8s::Node*> out;
  out.reserve(positions.size());
  for (const std::size_t i : positions) out.push_back(&ctx.cluster()->nodes[i]);
  return out;
}

std::optional<std::int64_t> int_label(const k8s::Node& node, const std::string& key) {
  const auto it = node.labels.find(key);
  if (it == node.labels.end()) return std::nullopt;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (ec != std::errc{} || ptr != it->second.data() + it->second.size()) return std::nullopt;
  return value;
}

std::string join(const std::set<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

}  // namespace

void rule_gpu_type(RuleContext& ctx) {
  const GpuType& cfg = ctx.rules().gpu_type;
  const k8s::Pod& pod = ctx.pod();
  const std::string* type_text = annotation(pod, "gpuadmit.io/gpu-type");
  const std::string* memory_text = annotation(pod, "gpuadmit.io/gpu-memory-min");
  if ((type_text == nullptr && memory_text == nullptr) || !ctx.is_gpu_pod()) return;

  std::optional<k8s::Quantity> memory_min;
  if (memory_text != nullptr) {
    auto q = k8s::Quantity::parse(*memory_text);
    if (!q) {
      ctx.report(
          kGpuType, cfg.action, "metadata.annotations",
          "gpuadmit.io/gpu-memory-min: " + q.error().message + ".\nFix: write a quantity such as 40Gi.",
          "gpuadmit.io/gpu-memory-min is not a quantity: " + *memory_text);
      return;
    }
    memory_min = *q;
  }
  std::vector<std::string> patterns;
  std::string wanted_text;
  if (type_text != nullptr) {
    for (std::size_t start = 0; start <= type_text->size();) {
      const std::size_t comma = std::min(type_text->find(',', start), type_text->size());
      std::string name = lower(std::string_view(*type_text).substr(start, comma - start));
      std::erase(name, ' ');
      if (!name.empty()) {
        wanted_text += (wanted_text.empty() ? "" : " or ") + name;
        const auto alias = cfg.aliases.find(name);
        if (alias != cfg.aliases.end()) {
          for (const auto& p : alias->second) patterns.push_back(lower(p));
        } else {
          patterns.push_back("*" + name + "*");
        }
      }
      start = comma + 1;
    }
  }
  if (memory_min)
    wanted_text += (wanted_text.empty() ? "" : " ") + std::string("with at least ") + human(*memory_min);

  // Which product values in this cluster satisfy the request (a product counts when any node of it does).
  std::set<std::string> allowed;
  std::map<std::string, std::pair<std::size_t, std::string>> present;  // product → (nodes, memory)
  for (const k8s::Node* node : gpu_nodes_for(ctx)) {
    const auto product = node->labels.find(cfg.product_label);
    if (product == node->labels.end()) continue;
    const auto memory_mib = int_label(*node, cfg.memory_label);
    auto& entry = present[product->second];
    ++entry.first;
    if (memory_mib) entry.second = std::to_string(*memory_mib / 1024) + "Gi";
    const bool type_ok =
        patterns.empty() || std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
          return glob_match(p, lower(product->second));
        });
    const bool memory_ok =
        !memory_min || (memory_mib && k8s::Quantity::from_units(*memory_mib << 20) >= *memory_min);
    if (type_ok && memory_ok) allowed.insert(product->second);
  }

  if (allowed.empty()) {
    std::string models;
    for (const auto& [product, info] : present) {
      models += (models.empty() ? "" : ", ") + product + " (" + (info.second.empty() ? "?" : info.second) +
                ", " + std::to_string(info.first) + (info.first == 1 ? " node)" : " nodes)");
    }
    if (models.empty()) models = "none labelled " + cfg.product_label;
    ctx.report(kGpuType, cfg.action, "metadata.annotations",
               "the pod asks for a GPU " + wanted_text +
                   ", and no GPU node in this cluster has one. The GPUs here: " + models +
                   ".\nFix: change gpuadmit.io/gpu-type or gpuadmit.io/gpu-memory-min to a GPU the cluster "
                   "has, or ask the cluster admins for that GPU.",
               "no GPU " + wanted_text + " in this cluster; it has: " + models);
    return;
  }

  const nlohmann::json expression = {{"key", cfg.product_label},
                                     {"operator", "In"},
                                     {"values", std::vector<std::string>(allowed.begin(), allowed.end())}};
  if (cfg.action == Action::kEnforce && ctx.can_fix()) {
    if (require_node_affinity(ctx.edit(spec_part("affinity")), {nlohmann::json::array({expression})})) {
      ctx.fixed(kGpuType, "spec.affinity.nodeAffinity",
                "required node affinity " + cfg.product_label + " In [" + join(allowed) + "] for a GPU " +
                    wanted_text);
    }
    return;
  }
  // Validate: every GPU node the pod could land on must carry an allowed product.
  for (const k8s::Node* node : gpu_nodes_for(ctx)) {
    const auto product = node->labels.find(cfg.product_label);
    const bool ok = product != node->labels.end() && allowed.contains(product->second);
    if (ok || !k8s::node_selector_matches(pod, *node)) continue;
    ctx.report(
        kGpuType, cfg.action, "spec.affinity.nodeAffinity",
        "the pod asks for a GPU " + wanted_text + " but could be scheduled on node " + node->name + " (" +
            (product == node->labels.end() ? std::string("no product label") : product->second) +
            ").\nFix: add required node affinity:\n    " + cfg.product_label + " In [" + join(allowed) + "]",
        "pod asks for a GPU " + wanted_text + " but may land on " +
            (product == node->labels.end() ? node->name : product->second));
    return;
  }
}

namespace {

struct CudaVersion {
  int major = 0;
  int minor = 0;
};

// "…-cuda12.1-…", "…cuda11.7…", and nvidia/cuda:12.1.0-runtime-ubuntu22.04 style tags.
std::optional<CudaVersion> cuda_of_image(std::string_view image) {
  const auto parse_at = [](std::string_view s) -> std::optional<CudaVersion> {
    CudaVersion v;
    auto [p1, e1] = std::from_chars(s.data(), s.data() + s.size(), v.major);
    if (e1 != std::errc{} || p1 == s.data() || p1 == s.data() + s.size() || *p1 != '.') return std::nullopt;
    auto [p2, e2] = std::from_chars(p1 + 1, s.data() + s.size(), v.minor);
    if (e2 != std::errc{} || p2 == p1 + 1 || v.major < 7 || v.major > 20) return std::nullopt;
    return v;
  };
  const std::string img = lower(image);
  for (std::size_t at = img.find("cuda"); at != std::string::npos; at = img.find("cuda", at + 4)) {
    if (auto v = parse_at(std::string_view(img).substr(at + 4))) return v;
  }
  const auto colon = img.rfind(':');
  const auto slash = img.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    const std::string_view repo = std::string_view(img).substr(0, colon);
    if (repo.ends_with("/cuda") || repo == "cuda") return parse_at(std::string_view(img).substr(colon + 1));
  }
  return std::nullopt;
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

}  // namespace

void rule_cuda_driver(RuleContext& ctx) {
  if (!ctx.is_gpu_pod()) return;
  const CudaDriver& cfg = ctx.rules().cuda_driver;
  std::optional<CudaVersion> needed;
  std::string image;
  for (const k8s::Container& c : ctx.pod().containers) {
    if (ctx.gpu_units(c) <= 0) continue;
    if (auto v = cuda_of_image(c.image); v && (!needed || v->major > needed->major ||
                                               (v->major == needed->major && v->minor > needed->minor))) {
      needed = v;
      image = c.image;
    }
  }
  if (!needed) return;
  const auto floor = floor_for(*needed);
  if (!floor) return;
  const std::string cuda = std::to_string(needed->major) + "." + std::to_string(needed->minor);
  const std::string driver = std::to_string(floor->driver_major) + "." + std::to_string(floor->driver_minor);

  std::map<std::string, std::size_t> drivers;  // "535.104" → nodes
  std::size_t qualifying = 0;
  std::size_t labelled = 0;
  for (const k8s::Node* node : gpu_nodes_for(ctx)) {
    const auto major = int_label(*node, cfg.major_label);
    const auto minor = int_label(*node, cfg.minor_label);
    if (!major) continue;
    ++labelled;
    ++drivers[std::to_string(*major) + "." + (minor ? std::to_string(*minor) : std::string("?"))];
    if (*major > floor->driver_major ||
        (*major == floor->driver_major && minor && *minor >= floor->driver_minor)) {
      ++qualifying;
    }
  }
  if (labelled == 0 || qualifying == labelled) return;  // unknown drivers, or every GPU node is new enough

  std::string present;
  for (const auto& [version, count] : drivers) {
    present += (present.empty() ? "" : ", ") + version + " (" + std::to_string(count) +
               (count == 1 ? " node)" : " nodes)");
  }
  if (qualifying > 0 && cfg.action == Action::kEnforce) {
    if (!ctx.can_fix()) return;  // validate: the affinity added by mutate keeps the pod on qualifying nodes
    using nlohmann::json;
    std::vector<json> alternatives{json::array({{{"key", cfg.major_label},
                                                 {"operator", "Gt"},
                                                 {"values", {std::to_string(floor->driver_major)}}}}),
                                   json::array({{{"key", cfg.major_label},
                                                 {"operator", "In"},
                                                 {"values", {std::to_string(floor->driver_major)}}},
                                                {{"key", cfg.minor_label},
                                                 {"operator", "Gt"},
                                                 {"values", {std::to_string(floor->driver_minor - 1)}}}})};
    if (require_node_affinity(ctx.edit(spec_part("affinity")), alternatives)) {
      ctx.fixed(kCudaDriver, "spec.affinity.nodeAffinity",
                "required node affinity on " + cfg.major_label + " for a driver ≥ " + driver + " (CUDA " +
                    cuda + ")");
    }
    return;
  }
  const std::string what = qualifying == 0 ? "no GPU node has it" : "some GPU nodes do not";
  ctx.report(
      kCudaDriver, cfg.action, "spec.containers",
      "image " + image + " is built for CUDA " + cuda + ", which needs an NVIDIA driver ≥ " + driver + "; " +
          what + " (drivers here: " + present +
          "). On an older driver CUDA fails at start with \"the provided PTX was "
          "compiled with an unsupported toolchain\" or \"CUDA driver version is insufficient\".\nFix: use an "
          "image built for the CUDA the drivers support, or ask for nodes with a newer driver.",
      "image built for CUDA " + cuda + " needs driver ≥ " + driver + "; " + what + " (" + present + ")");
}

}  // namespace gpuadmit::policy
