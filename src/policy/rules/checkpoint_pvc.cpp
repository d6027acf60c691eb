// checkpoint-pvc: a checkpoint volume that fills up kills a training run at its first save after the disk is
// full; size it for the model and the checkpoints kept, and make sure its storage class exists.
#include <cmath>
#include <optional>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/cluster_object_parser.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kCheckpointPvc = "checkpoint-pvc";

const std::string* find(const k8s::StringMap& map, std::string_view key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

double bytes_per_parameter(const k8s::StringMap& annotations) {
  if (const std::string* b = find(annotations, "gpuadmit.io/checkpoint-bytes-per-parameter")) {
    char* end = nullptr;
    const double v = std::strtod(b->c_str(), &end);
    if (end == b->c_str() + b->size() && v > 0 && v <= 64) return v;
  }
  const std::string* precision = find(annotations, "gpuadmit.io/model-precision");
  if (precision == nullptr) return 4;
  if (*precision == "fp16" || *precision == "bf16" || *precision == "float16" || *precision == "bfloat16")
    return 2;
  if (*precision == "int8" || *precision == "fp8") return 1;
  if (*precision == "int4" || *precision == "fp4") return 0.5;
  return 4;
}

struct CheckpointSize {
  k8s::Quantity size;
  std::string how;
};

// What a checkpoint store for this model needs: params × bytes × kept × headroom, at least the policy
// minimum.
CheckpointSize checkpoint_need(const k8s::StringMap& annotations, const CheckpointPvc& cfg) {
  CheckpointSize need{cfg.minimum, "the policy minimum " + human(cfg.minimum)};
  const std::string* params_text = find(annotations, "gpuadmit.io/model-parameters");
  const auto params = params_text != nullptr ? parse_parameter_count(*params_text) : std::nullopt;
  if (!params) return need;
  std::int64_t kept = cfg.checkpoints_kept;
  if (const std::string* k = find(annotations, "gpuadmit.io/checkpoints-kept")) {
    kept = std::max<std::int64_t>(1, std::strtoll(k->c_str(), nullptr, 10));
  }
  const double bytes = bytes_per_parameter(annotations);
  const double total =
      *params * bytes * static_cast<double>(kept) * static_cast<double>(cfg.headroom_percent) / 100.0;
  const auto gib = static_cast<std::int64_t>(std::ceil(total / static_cast<double>(1LL << 30)));
  const k8s::Quantity estimate = k8s::Quantity::from_units(gib << 30, k8s::Quantity::Format::kBinarySI);
  if (estimate > need.size) {
    std::array<char, 32> b{};
    std::snprintf(b.data(), b.size(), "%g", bytes);
    need = {estimate, *params_text + " parameters × " + b.data() + " bytes × " + std::to_string(kept) +
                          " checkpoints kept × " + std::to_string(cfg.headroom_percent) + "% headroom"};
  }
  return need;
}

bool is_marked(const k8s::ObjectMeta& meta, const CheckpointPvc& cfg) {
  const std::string* label = find(meta.labels, cfg.marker);
  const std::string* annotation = find(meta.annotations, cfg.marker);
  return (label != nullptr && *label == "true") || (annotation != nullptr && *annotation == "true");
}

void add(Decision& decision, Action action, std::string field, std::string message, std::string summary) {
  Finding f{std::string(kCheckpointPvc), action, std::move(field), std::move(message),
            one_line(std::string(kCheckpointPvc) + ": " + summary)};
  if (action == Action::kEnforce) decision.violations.push_back(std::move(f));
  if (action == Action::kWarn) decision.warnings.push_back(std::move(f));
  if (action == Action::kAudit) decision.audits.push_back(std::move(f));
}

// Why a claim of this storage class would never bind ("" when it can): the class does not exist, or none is
// named and the cluster has no default. An explicit "" means "no class" (pre-provisioned volumes): fine.
std::string class_problem(const ClusterSnapshot& cluster, const std::optional<std::string>& storage_class) {
  if (storage_class && storage_class->empty()) return "";
  if (storage_class) {
    if (cluster.storage_class(*storage_class) != nullptr) return "";
    std::string classes;
    for (const auto& sc : cluster.storage_classes) classes += (classes.empty() ? "" : ", ") + sc.name;
    return "storage class \"" + *storage_class +
           "\" does not exist (storage classes here: " + (classes.empty() ? "none" : classes) + ")";
  }
  if (cluster.default_storage_class() != nullptr) return "";
  return "no storage class is named and the cluster has no default one";
}

}  // namespace

Result<bool> checkpoint_claim_parse_check(const nlohmann::json& object) {
  auto claim = k8s::parse_persistent_volume_claim(object);
  if (!claim) return claim.error();
  return true;
}

void check_checkpoint_claim(const nlohmann::json& object, const RuleSet& rules,
                            const ClusterSnapshot* cluster, Decision& decision) {
  const CheckpointPvc& cfg = rules.checkpoint_pvc;
  auto claim = k8s::parse_persistent_volume_claim(object);
  if (!claim) return;
  if (!is_marked(claim->meta, cfg)) {
    // Any claim, checkpoint or not: one whose class cannot provision it strands the pods that mount it.
    if (cluster == nullptr) return;
    if (const std::string problem = class_problem(*cluster, claim->storage_class); !problem.empty()) {
      const std::string name = k8s::display_name(claim->meta);
      add(decision, Action::kWarn, "spec.storageClassName",
          "claim \"" + name + "\": " + problem +
              "; it would stay Pending, and so would every pod that mounts it.\nFix: set "
              "spec.storageClassName to a storage class of this cluster.",
          "claim \"" + name + "\": " + problem + "; it and its pods stay Pending");
    }
    return;
  }
  const CheckpointSize need = checkpoint_need(claim->meta.annotations, cfg);
  const std::string name = k8s::display_name(claim->meta);
  if (!claim->request || *claim->request < need.size) {
    const std::string have = claim->request ? human(*claim->request) : std::string("no size");
    add(decision, cfg.action, "spec.resources.requests.storage",
        "checkpoint claim \"" + name + "\" requests " + have + ", less than the " + human(need.size) +
            " it needs (" + need.how +
            "). A full checkpoint volume fails the run at its next save, often hours in.\nFix:\n"
            "    spec:\n      resources:\n        requests:\n          storage: " +
            human(need.size),
        "claim \"" + name + "\" requests " + have + " < " + human(need.size) + " needed (" + need.how + ")");
  }
  if (cluster == nullptr || (claim->storage_class && claim->storage_class->empty())) return;  // "" = no class
  if (claim->storage_class) {
    if (cluster->storage_class(*claim->storage_class) == nullptr) {
      std::string classes;
      for (const auto& sc : cluster->storage_classes) classes += (classes.empty() ? "" : ", ") + sc.name;
      add(decision, cfg.action, "spec.storageClassName",
          "checkpoint claim \"" + name + "\" uses storage class \"" + *claim->storage_class +
              "\", which does not exist; the claim would stay Pending and so would every pod that mounts it. "
              "Storage classes here: " +
              (classes.empty() ? "none" : classes) +
              ".\nFix: set spec.storageClassName "
              "to one of them.",
          "storage class \"" + *claim->storage_class +
              "\" does not exist (have: " + (classes.empty() ? "none" : classes) + ")");
    }
  } else if (cluster->default_storage_class() == nullptr) {
    add(decision, cfg.action, "spec.storageClassName",
        "checkpoint claim \"" + name +
            "\" names no storage class and the cluster has no default one; the claim "
            "would stay Pending.\nFix: set spec.storageClassName.",
        "no storage class named and the cluster has no default class");
  }
}

void rule_checkpoint_pvc(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr) return;
  const k8s::Pod& pod = ctx.pod();
  const CheckpointPvc& cfg = ctx.rules().checkpoint_pvc;
  for (std::size_t i = 0; i < pod.volumes.size(); ++i) {
    const k8s::Volume& v = pod.volumes[i];
    const std::string field = "spec.volumes[" + std::to_string(i) + "]";
    if (v.ephemeral) {
      // The ephemeral-volume controller makes this claim per pod; a class that cannot provision it leaves
      // every pod Pending ("waiting for ephemeral volume controller", then "unbound PersistentVolumeClaims").
      if (const std::string problem = class_problem(*cluster, v.ephemeral_storage_class); !problem.empty()) {
        ctx.report(
            Action::kWarn, field + ".ephemeral.volumeClaimTemplate.spec.storageClassName",
            "ephemeral volume \"" + v.name + "\": " + problem +
                "; its claim would stay Pending, and so would the pod.\nFix: set "
                "ephemeral.volumeClaimTemplate.spec.storageClassName to a storage class of this cluster.",
            "ephemeral volume \"" + v.name + "\": " + problem + "; the pod stays Pending");
      }
      continue;
    }
    if (v.claim_name.empty()) continue;
    const k8s::PersistentVolumeClaim* claim = cluster->claim(pod.meta.namespace_, v.claim_name);
    // On pods these are warnings: the claim may be created right after the pod (kubectl apply -f dir/).
    if (claim == nullptr) {
      ctx.report(Action::kWarn, field,
                 "volume \"" + v.name + "\" uses claim \"" + v.claim_name +
                     "\", which does not exist in namespace " + pod.meta.namespace_ +
                     " (yet): the pod stays Pending until it does.",
                 "claim \"" + v.claim_name + "\" does not exist (yet); the pod stays Pending until it does");
      continue;
    }
    if (claim->phase != "Bound") {
      if (const std::string problem = class_problem(*cluster, claim->storage_class); !problem.empty()) {
        ctx.report(Action::kWarn, field,
                   "volume \"" + v.name + "\" uses claim \"" + v.claim_name +
                       "\", which cannot bind: " + problem +
                       ". The claim stays Pending, and so does the pod (\"unbound immediate "
                       "PersistentVolumeClaims\").\nFix: recreate claim \"" +
                       v.claim_name + "\" with spec.storageClassName set to a storage class of this cluster.",
                   "claim \"" + v.claim_name + "\" cannot bind: " + problem + "; the pod stays Pending");
      }
    }
    if (!is_marked(claim->meta, cfg) ||
        pod.meta.annotations.find("gpuadmit.io/model-parameters") == pod.meta.annotations.end()) {
      continue;
    }
    const CheckpointSize need = checkpoint_need(pod.meta.annotations, cfg);
    if (claim->request && *claim->request >= need.size) continue;
    ctx.report(Action::kWarn, field,
               "checkpoint claim \"" + v.claim_name + "\" holds " +
                   (claim->request ? human(*claim->request) : "?") + ", less than the " + human(need.size) +
                   " this pod's model needs (" + need.how + ").",
               "claim \"" + v.claim_name + "\" is smaller than the " + human(need.size) +
                   " this model's checkpoints need");
  }
}

void read_checkpoint_pvc(ParameterReader& r, RuleSet& rules) {
  CheckpointPvc& p = rules.checkpoint_pvc;
  r.action("action", p.action);
  r.string("marker", p.marker);
  r.quantity("minimum", p.minimum);
  r.integer("checkpointsKept", 1, 1000, p.checkpoints_kept);
  r.integer("headroomPercent", 100, 1000, p.headroom_percent);
}

}  // namespace gpuadmit::policy
