// gpu-type: steer a GPU pod to the GPUs it asks for, using the product labels that exist in this cluster.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/scheduling.hpp"

namespace gpuadmit::policy {
namespace {

// The GPU the pod asks for: product names (gpuadmit.io/gpu-type) and the patterns they stand for through the
// policy's aliases (none: any product), and the least memory (gpuadmit.io/gpu-memory-min).
struct Wanted {
  std::vector<std::string> names;
  std::vector<std::string> patterns;
  std::optional<k8s::Quantity> memory_min;
};

Wanted wanted_of(const GpuType& cfg, const std::string* type_text, std::optional<k8s::Quantity> memory_min) {
  Wanted wanted{{}, {}, memory_min};
  if (type_text == nullptr) return wanted;
  for (std::size_t start = 0; start <= type_text->size();) {
    const std::size_t comma = std::min(type_text->find(',', start), type_text->size());
    std::string name = lower(std::string_view(*type_text).substr(start, comma - start));
    std::erase(name, ' ');
    start = comma + 1;
    if (name.empty()) continue;
    const auto alias = cfg.aliases.find(name);
    if (alias != cfg.aliases.end()) {
      for (const auto& p : alias->second) wanted.patterns.push_back(lower(p));
    } else {
      wanted.patterns.push_back("*" + name + "*");
    }
    wanted.names.push_back(std::move(name));
  }
  return wanted;
}

// A GPU product of the nodes the pod's resources point at: how many carry it, and their memory as labelled
// (the last labelled node's).
struct Product {
  std::size_t nodes = 0;
  std::optional<std::int64_t> memory_mib;
};

// The products present, and those that satisfy the request (a product counts when any node of it does).
struct Products {
  std::map<std::string, Product> present;
  std::set<std::string> allowed;
};

Products products_for(const RuleContext& ctx, const Wanted& wanted) {
  const GpuType& cfg = ctx.rules().gpu_type;
  Products out;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node* node = &ctx.cluster()->nodes[group.first];
    const auto product = node->labels.find(cfg.product_label);
    if (product == node->labels.end()) continue;
    const auto memory_mib = int_label(*node, cfg.memory_label);
    Product& entry = out.present[product->second];
    entry.nodes += group.count;
    if (memory_mib) entry.memory_mib = memory_mib;
    const bool type_ok =
        wanted.patterns.empty() ||
        std::any_of(wanted.patterns.begin(), wanted.patterns.end(),
                    [&](const std::string& p) { return glob_match(p, lower(product->second)); });
    const bool memory_ok = !wanted.memory_min ||
                           (memory_mib && k8s::Quantity::from_units(*memory_mib << 20) >= *wanted.memory_min);
    if (type_ok && memory_ok) out.allowed.insert(product->second);
  }
  return out;
}

// The first GPU node the pod could be scheduled on that carries no allowed product, or nullptr.
const k8s::Node* stray_node(const RuleContext& ctx, const std::set<std::string>& allowed) {
  const std::string& label = ctx.rules().gpu_type.product_label;
  for (const ClusterSnapshot::NodeGroup& group : gpu_groups_for(ctx)) {
    const k8s::Node* node = &ctx.cluster()->nodes[group.first];  // the group's first: the first such node
    const auto product = node->labels.find(label);
    const bool ok = product != node->labels.end() && allowed.contains(product->second);
    if (!ok && k8s::node_selector_matches(ctx.pod(), *node)) return node;
  }
  return nullptr;
}

// "a100 or h100 with at least 40Gi".
std::string text_of(const Wanted& wanted) {
  std::string out;
  for (const std::string& name : wanted.names) out += (out.empty() ? "" : " or ") + name;
  if (wanted.memory_min)
    out += (out.empty() ? "" : " ") + std::string("with at least ") + human(*wanted.memory_min);
  return out;
}

std::string join(const std::set<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// "NVIDIA-A100-SXM4-40GB (40Gi, 2 nodes), Tesla-T4 (?, 1 node)".
std::string models_text(const Products& products, const GpuType& cfg) {
  std::string out;
  for (const auto& [name, product] : products.present) {
    const std::string memory = product.memory_mib ? std::to_string(*product.memory_mib / 1024) + "Gi" : "?";
    out += (out.empty() ? "" : ", ") + name + " (" + memory + ", " + std::to_string(product.nodes) +
           (product.nodes == 1 ? " node)" : " nodes)");
  }
  return out.empty() ? "none labelled " + cfg.product_label : out;
}

void report_unreadable_memory(RuleContext& ctx, const std::string& text, const std::string& error) {
  ctx.report(ctx.rules().gpu_type.action, "metadata.annotations",
             "gpuadmit.io/gpu-memory-min: " + error + ".\nFix: write a quantity such as 40Gi.",
             "gpuadmit.io/gpu-memory-min is not a quantity: " + text);
}

void report_absent(RuleContext& ctx, const std::string& wanted, const Products& products) {
  const GpuType& cfg = ctx.rules().gpu_type;
  const std::string models = models_text(products, cfg);
  ctx.report(cfg.action, "metadata.annotations",
             "the pod asks for a GPU " + wanted +
                 ", and no GPU node in this cluster has one. The GPUs here: " + models +
                 ".\nFix: change gpuadmit.io/gpu-type or gpuadmit.io/gpu-memory-min to a GPU the cluster "
                 "has, or ask the cluster admins for that GPU.",
             "no GPU " + wanted + " in this cluster; it has: " + models);
}

void require_products(RuleContext& ctx, const std::string& wanted, const std::set<std::string>& allowed) {
  const GpuType& cfg = ctx.rules().gpu_type;
  const nlohmann::json expression = {{"key", cfg.product_label},
                                     {"operator", "In"},
                                     {"values", std::vector<std::string>(allowed.begin(), allowed.end())}};
  if (require_node_affinity(ctx.edit(spec_part("affinity")), {nlohmann::json::array({expression})})) {
    ctx.fixed("spec.affinity.nodeAffinity", "required node affinity " + cfg.product_label + " In [" +
                                                join(allowed) + "] for a GPU " + wanted);
  }
}

void report_stray(RuleContext& ctx, const std::string& wanted, const std::set<std::string>& allowed,
                  const k8s::Node& node) {
  const GpuType& cfg = ctx.rules().gpu_type;
  const auto product = node.labels.find(cfg.product_label);
  const bool labelled = product != node.labels.end();
  ctx.report(cfg.action, "spec.affinity.nodeAffinity",
             "the pod asks for a GPU " + wanted + " but could be scheduled on node " + node.name + " (" +
                 (labelled ? product->second : std::string("no product label")) +
                 ").\nFix: add required node affinity:\n    " + cfg.product_label + " In [" + join(allowed) +
                 "]",
             "pod asks for a GPU " + wanted + " but may land on " + (labelled ? product->second : node.name));
}

}  // namespace

void rule_gpu_type(RuleContext& ctx) {
  const GpuType& cfg = ctx.rules().gpu_type;
  const std::string* type_text = annotation(ctx.pod(), "gpuadmit.io/gpu-type");
  const std::string* memory_text = annotation(ctx.pod(), "gpuadmit.io/gpu-memory-min");
  if ((type_text == nullptr && memory_text == nullptr) || !ctx.is_gpu_pod()) return;
  std::optional<k8s::Quantity> memory_min;
  if (memory_text != nullptr) {
    auto q = k8s::Quantity::parse(*memory_text);
    if (!q) {
      report_unreadable_memory(ctx, *memory_text, q.error().message);
      return;
    }
    memory_min = *q;
  }
  const Wanted wanted = wanted_of(cfg, type_text, memory_min);
  const std::string wanted_text = text_of(wanted);
  const Products products = products_for(ctx, wanted);
  if (products.allowed.empty()) {
    report_absent(ctx, wanted_text, products);
  } else if (cfg.action == Action::kEnforce && ctx.can_fix_pod()) {
    require_products(ctx, wanted_text, products.allowed);
  } else if (const k8s::Node* node = stray_node(ctx, products.allowed)) {
    // Validate: every GPU node the pod could land on must carry an allowed product.
    report_stray(ctx, wanted_text, products.allowed, *node);
  }
}

void read_gpu_type(ParameterReader& r, RuleSet& rules) {
  GpuType& p = rules.gpu_type;
  r.action("action", p.action);
  r.string("productLabel", p.product_label);
  r.string("memoryLabel", p.memory_label);
  r.string_lists("aliases", "alias to a list of product patterns", p.aliases);
  StringLists lowered;  // aliases match case-insensitively
  for (auto& [alias, patterns] : p.aliases) lowered[lower(alias)] = std::move(patterns);
  p.aliases = std::move(lowered);
}

}  // namespace gpuadmit::policy
