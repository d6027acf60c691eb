#include "rule_context.hpp"

#include "dra_devices.hpp"

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/policy/gpu_share.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

namespace gpuadmit::policy {

namespace {

// What no runtime merged into a pod can mend.
bool denies_partial_pods(std::string_view rule_id) {
  return rule_id == "gpu-whole-units" || rule_id == "gpu-limit-equals-request" || rule_id == "gpu-quota";
}

}  // namespace

void RuleContext::report(Action action, std::string field, std::string message, std::string summary) {
  // A stale cluster view (API server unreachable) must not turn a healthy pod away on old facts: by default
  // cluster-aware verdicts become warnings that say how old the view is.
  if (rule_->cluster_aware && cluster_ != nullptr &&
      cluster_->stale_for(rule_->reads | (pod_.resource_claims.empty() ? 0 : rule_->reads_for_claims)) &&
      rules_.on_stale_cluster != OnStale::kEnforce) {
    if (rules_.on_stale_cluster == OnStale::kSkip) return;
    const std::string age = "(cluster view " + std::to_string(cluster_->age_seconds) + "s old) ";
    if (action == Action::kEnforce) action = Action::kWarn;
    summary = age + summary;
    message = age + message;
  }
  if (partial_ && action == Action::kEnforce && !denies_partial_pods(rule_->id)) {
    action = Action::kWarn;
    summary = "left to the runtime: " + summary;
    message +=
        " (Warned, not denied: this pod is completed after admission, by its runtime, its operator or a "
        "podSpecPatch, which may supply it.)";
  }
  std::string line = one_line(std::string(rule_->id) + ": " + summary);
  Finding finding{std::string(rule_->id), action, std::move(field), std::move(message), std::move(line)};
  switch (action) {
    case Action::kEnforce:
      decision_.violations.push_back(std::move(finding));
      break;
    case Action::kWarn:
      decision_.warnings.push_back(std::move(finding));
      break;
    case Action::kAudit:
      decision_.audits.push_back(std::move(finding));
      break;
    case Action::kOff:
      break;
  }
}

void RuleContext::fixed(std::string field, std::string description) {
  // A pod that needs one fix usually needs several (Guaranteed QoS alone sets up to four values): room
  // for them at the first, rather than growing the vector one doubling at a time.
  constexpr std::size_t kFixesReserve = 8;
  if (decision_.fixes.empty()) {
    decision_.fixes.reserve(kFixesReserve);
  }
  decision_.fixes.push_back({std::string(rule_->id), std::move(field), std::move(description)});
}

void RuleContext::notice(std::string text) {
  decision_.notices.push_back(one_line(text));
}

bool RuleContext::is_gpu_pod() const {
  if (!gpu_pod_) gpu_pod_ = any_gpu_container();
  return *gpu_pod_;
}

bool RuleContext::needs_gpu_node() const {
  return is_gpu_pod() || asks_for_node_counted_share(pod_);
}

bool RuleContext::any_gpu_container() const {
  return std::any_of(pod_.containers.begin(), pod_.containers.end(), [&](const k8s::Container& c) {
    const auto positive_gpu = [&](const k8s::ResourceList& list) {
      return std::any_of(list.begin(), list.end(), [&](const auto& entry) {
        return rules_.is_gpu_resource(entry.first) && entry.second > k8s::Quantity{};
      });
    };
    return positive_gpu(c.resources.limits) || positive_gpu(c.resources.requests) ||
           dra_gpu_units(c, pod_, cluster(), rules_, budget_) > 0;
  });
}

std::int64_t RuleContext::gpu_units(const k8s::Container& c) const {
  const auto& containers = pod_.containers;
  const std::less<> before;  // a total order on pointers, also for a container of another pod
  if (containers.empty() || before(&c, containers.data()) ||
      !before(&c, containers.data() + containers.size())) {
    return count_gpu_units(c);
  }
  if (container_gpus_.empty()) {
    container_gpus_.reserve(containers.size());
    for (const k8s::Container& each : containers) container_gpus_.push_back(count_gpu_units(each));
  }
  return container_gpus_[static_cast<std::size_t>(&c - containers.data())];
}

namespace {

// GPU counts are sums of quantities a request may set near int64's limit: they stop there, not wrap.
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<std::int64_t>::max() : sum;
}

}  // namespace

std::int64_t RuleContext::count_gpu_units(const k8s::Container& c) const {
  // GPUs from DRA claims (a device class of GPUs) count like the device plugin's.
  std::int64_t total = dra_gpu_units(c, pod_, cluster(), rules_, budget_);
  for (const auto& [name, limit] : c.resources.limits) {
    if (rules_.is_gpu_resource(name) && limit > k8s::Quantity{})
      total = saturating_add(total, limit.units_ceil());
  }
  for (const auto& [name, request] : c.resources.requests) {
    if (rules_.is_gpu_resource(name) && !c.resources.limits.contains(name) && request > k8s::Quantity{}) {
      total = saturating_add(total, request.units_ceil());
    }
  }
  return total;
}

const std::vector<std::pair<ClusterSnapshot::NodeGroup, std::int64_t>>& RuleContext::dra_gpu_nodes() const {
  if (!dra_gpu_nodes_) {
    dra_gpu_nodes_.emplace();
    if (cluster() != nullptr && !pod_.resource_claims.empty())
      *dra_gpu_nodes_ = nodes_with_gpu_devices(pod_, *cluster(), rules_, budget_);
  }
  return *dra_gpu_nodes_;
}

std::int64_t RuleContext::gpu_units() const {
  std::int64_t total = 0;
  for (const k8s::Container& c : pod_.containers) {
    if (c.kind != k8s::ContainerKind::kInit) total = saturating_add(total, gpu_units(c));
  }
  return total;
}

std::string field_of(const k8s::Container& c, std::string_view suffix) {
  // Callers append ".resources.limits.cpu" and the like: room for that up front, so the field is written
  // in one allocation rather than grown past the small-string buffer twice.
  constexpr std::size_t kRoom = 64;
  std::string out;
  out.reserve(kRoom + suffix.size());
  out += "spec.";
  out += c.array_name();
  out += '[';
  out += std::to_string(c.index);
  out += ']';
  out += suffix;
  return out;
}

const std::string* annotation(const k8s::Pod& pod, std::string_view key) {
  const auto it = pod.meta.annotations.find(key);
  return it == pod.meta.annotations.end() ? nullptr : &it->second;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

const k8s::Quantity* quantity_of(const k8s::ResourceList& list, std::string_view name) {
  const auto it = list.find(name);
  return it == list.end() ? nullptr : &it->second;
}

std::string describe(const k8s::Container& c) {
  switch (c.kind) {
    case k8s::ContainerKind::kInit:
      return "init container \"" + c.name + "\"";
    case k8s::ContainerKind::kSidecar:
      return "sidecar \"" + c.name + "\"";
    case k8s::ContainerKind::kRegular:
      break;
  }
  return "container \"" + c.name + "\"";
}

std::string human(const k8s::Quantity& q) {
  if (q.is_whole() && q.format() != k8s::Quantity::Format::kBinarySI) return std::to_string(q.units_ceil());
  if (q.is_whole()) return q.to_string();
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.6g", q.approx());
  return buffer.data();
}

std::optional<double> parse_parameter_count(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'k':
    case 'K':
      scale = 1e3;
      break;
    case 'm':
    case 'M':
      scale = 1e6;
      break;
    case 'b':
    case 'B':
    case 'g':
    case 'G':
      scale = 1e9;
      break;
    case 't':
    case 'T':
      scale = 1e12;
      break;
    default:
      break;
  }
  if (scale != 1) text.remove_suffix(1);
  const std::string number(text);
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value) || value <= 0 || value * scale > 1e15) {
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace gpuadmit::policy
