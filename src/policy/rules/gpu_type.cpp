// gpu-type: steer a GPU pod to the GPUs it asks for, using the product labels that exist in this cluster.
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
          cfg.action, "metadata.annotations",
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
    ctx.report(cfg.action, "metadata.annotations",
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
      ctx.fixed("spec.affinity.nodeAffinity", "required node affinity " + cfg.product_label + " In [" +
                                                  join(allowed) + "] for a GPU " + wanted_text);
    }
    return;
  }
  // Validate: every GPU node the pod could land on must carry an allowed product.
  for (const k8s::Node* node : gpu_nodes_for(ctx)) {
    const auto product = node->labels.find(cfg.product_label);
    const bool ok = product != node->labels.end() && allowed.contains(product->second);
    if (ok || !k8s::node_selector_matches(pod, *node)) continue;
    ctx.report(
        cfg.action, "spec.affinity.nodeAffinity",
        "the pod asks for a GPU " + wanted_text + " but could be scheduled on node " + node->name + " (" +
            (product == node->labels.end() ? std::string("no product label") : product->second) +
            ").\nFix: add required node affinity:\n    " + cfg.product_label + " In [" + join(allowed) + "]",
        "pod asks for a GPU " + wanted_text + " but may land on " +
            (product == node->labels.end() ? node->name : product->second));
    return;
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
