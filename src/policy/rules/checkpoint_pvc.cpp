// checkpoint-pvc: a checkpoint volume that fills up kills a training run at its first save after the disk is
// full; size it for the model and the checkpoints kept, and make sure its storage class exists.
#include <algorithm>
#include <cmath>
#include <optional>

#include "../rule_context.hpp"
#include "gpuadmit/k8s/cluster_object_parser.hpp"
#include "gpuadmit/policy/inference_memory.hpp"
#include "gpuadmit/policy/training_memory.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kCheckpointPvc = "checkpoint-pvc";

const std::string* find(const k8s::StringMap& map, std::string_view key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

struct CheckpointSize {
  k8s::Quantity size;
  std::string how;
};

// What the checkpoints of the annotated model need with the policy's headroom, rounded up to a whole GiB:
// nothing without gpuadmit.io/model-parameters; an error naming an annotation that cannot be read.
Result<std::optional<CheckpointSize>> model_checkpoint_need(const k8s::StringMap& annotations,
                                                            const CheckpointPvc& cfg) {
  auto model = checkpoint_model_of(annotations, cfg.checkpoints_kept);
  if (!model) return model.error();
  if (!*model) return std::optional<CheckpointSize>();
  const CheckpointEstimate e = checkpoint_bytes(**model);
  const double total = std::min(e.bytes * static_cast<double>(cfg.headroom_percent) / 100.0, 1e22);
  const auto gib = static_cast<std::int64_t>(std::ceil(total / static_cast<double>(1LL << 30)));
  return std::optional<CheckpointSize>(CheckpointSize{
      k8s::Quantity::from_units(gib, k8s::Quantity::Format::kBinarySI).times(std::int64_t{1} << 30),
      e.working + " × " + std::to_string(cfg.headroom_percent) + "% headroom"});
}

// What a checkpoint claim needs: the model's checkpoints, at least the policy minimum.
Result<CheckpointSize> checkpoint_need(const k8s::StringMap& annotations, const CheckpointPvc& cfg) {
  CheckpointSize need{cfg.minimum, "the policy minimum " + human(cfg.minimum)};
  auto estimate = model_checkpoint_need(annotations, cfg);
  if (!estimate) return estimate.error();
  if (*estimate && (*estimate)->size > need.size) need = std::move(**estimate);
  return need;
}

constexpr std::string_view kUnreadableFix =
    ".\nFix: correct the annotation or remove it (docs/policy.md, checkpoint-pvc).";

bool is_marked(const k8s::ObjectMeta& meta, const CheckpointPvc& cfg) {
  const std::string* label = find(meta.labels, cfg.marker);
  const std::string* annotation = find(meta.annotations, cfg.marker);
  return (label != nullptr && *label == "true") || (annotation != nullptr && *annotation == "true");
}

void add(Decision& decision, Action action, std::string field, std::string message,
         const std::string& summary) {
  Finding f{std::string(kCheckpointPvc), action, std::move(field), std::move(message),
            one_line(std::string(kCheckpointPvc) + ": " + summary)};
  if (action == Action::kEnforce) {
    decision.violations.push_back(std::move(f));
  } else if (action == Action::kWarn) {
    decision.warnings.push_back(std::move(f));
  } else if (action == Action::kAudit) {
    decision.audits.push_back(std::move(f));
  }
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

// The volume mounted where the pod says it writes checkpoints (gpuadmit.io/checkpoint-path): the mount
// that holds that path, the deepest when several do; "" when none does or the pod does not say.
std::string checkpoint_volume(const k8s::Pod& pod) {
  const std::string* path = annotation(pod, "gpuadmit.io/checkpoint-path");
  if (path == nullptr) return "";
  std::string volume;
  std::size_t depth = 0;
  for (const k8s::Container& c : pod.containers) {
    for (const k8s::VolumeMount& m : c.volume_mounts) {
      std::string_view mount = m.mount_path;
      while (mount.size() > 1 && mount.back() == '/') mount.remove_suffix(1);
      const bool holds = !mount.empty() && path->starts_with(mount) &&
                         (path->size() == mount.size() || mount == "/" || (*path)[mount.size()] == '/');
      if (holds && mount.size() >= depth) {
        volume = m.name;
        depth = mount.size();
      }
    }
  }
  return volume;
}

// An existing claim smaller than the model's checkpoints: the run fails at a save hours in, and the claim
// cannot grow unless its storage class allows expansion, so the pod is judged at apply time.
void report_small_claim(RuleContext& ctx, const std::string& field, const k8s::PersistentVolumeClaim& claim,
                        const std::optional<k8s::Quantity>& holds, const CheckpointSize& need) {
  const std::string& claim_name = claim.meta.name;
  const std::string have = holds ? human(*holds) : std::string("no size");
  const nlohmann::json storage_patch = {
      {"spec", {{"resources", {{"requests", {{"storage", human(need.size)}}}}}}}};
  ctx.report(ctx.rules().checkpoint_pvc.action, field,
             "checkpoint claim \"" + claim_name + "\" holds " + have + ", less than the " + human(need.size) +
                 " this pod's checkpoints need (" + need.how +
                 "). A full checkpoint volume fails the run at its next save, often hours in.\nFix: mount a "
                 "claim of at least " +
                 human(need.size) +
                 ", or grow this one (if its storage class allows expansion):\n"
                 "    kubectl patch pvc " +
                 claim_name + " -n " + claim.meta.namespace_ + " -p '" + storage_patch.dump() + "'",
             "claim \"" + claim_name + "\" holds " + have + " < " + human(need.size) +
                 " this model's checkpoints need (" + need.how + ")");
}

// A checkpoint claim's storage class must exist (or the cluster must have a default one when it names none).
void check_checkpoint_class(const k8s::PersistentVolumeClaim& claim, const std::string& name,
                            const CheckpointPvc& cfg, const ClusterSnapshot* cluster, Decision& decision) {
  if (cluster == nullptr || (claim.storage_class && claim.storage_class->empty())) return;  // "" = no class
  if (claim.storage_class) {
    if (cluster->storage_class(*claim.storage_class) == nullptr) {
      std::string classes;
      for (const auto& sc : cluster->storage_classes) classes += (classes.empty() ? "" : ", ") + sc.name;
      add(decision, cfg.action, "spec.storageClassName",
          "checkpoint claim \"" + name + "\" uses storage class \"" + *claim.storage_class +
              "\", which does not exist; the claim would stay Pending and so would every pod that mounts it. "
              "Storage classes here: " +
              (classes.empty() ? "none" : classes) +
              ".\nFix: set spec.storageClassName "
              "to one of them.",
          "storage class \"" + *claim.storage_class +
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
  const std::string name = k8s::display_name(claim->meta);
  auto need_or = checkpoint_need(claim->meta.annotations, cfg);
  if (!need_or) {
    // A hint that cannot be read is not something the policy enforces: say so, and hold the claim to the
    // policy minimum alone.
    add(decision, Action::kWarn, "metadata.annotations",
        need_or.error().message + "; the claim is held to the policy minimum " + human(cfg.minimum) +
            " alone" + std::string(kUnreadableFix),
        "claim \"" + name + "\": " + need_or.error().message);
    need_or = CheckpointSize{cfg.minimum, "the policy minimum " + human(cfg.minimum)};
  }
  const CheckpointSize& need = *need_or;
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
  check_checkpoint_class(*claim, name, cfg, cluster, decision);
}

void rule_checkpoint_pvc(RuleContext& ctx) {
  const ClusterSnapshot* cluster = ctx.cluster();
  if (cluster == nullptr) return;
  const k8s::Pod& pod = ctx.pod();
  const CheckpointPvc& cfg = ctx.rules().checkpoint_pvc;
  const std::string at_path = checkpoint_volume(pod);
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
    // A missing claim is a warning: it may be created right after the pod (kubectl apply -f dir/).
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
    if (!is_marked(claim->meta, cfg) && v.name != at_path) continue;
    const auto need = model_checkpoint_need(pod.meta.annotations, cfg);
    if (!need) {
      ctx.report(Action::kWarn, "metadata.annotations", need.error().message + std::string(kUnreadableFix),
                 need.error().message);
      continue;
    }
    // A bound claim holds its volume's capacity, which may be more than it asked for (a provisioner's
    // rounding, a pre-made NFS volume).
    const std::optional<k8s::Quantity>& holds =
        claim->phase == "Bound" && claim->capacity ? claim->capacity : claim->request;
    if (!*need || (holds && *holds >= (*need)->size)) continue;
    report_small_claim(ctx, field, *claim, holds, **need);
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
