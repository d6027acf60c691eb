// presets: PodDefault-style bundles chosen by pod labels or by GPU request, which (unlike PodDefault) can
// also carry resources, tolerations and node selection. A preset only fills gaps: whatever the user set is
// kept, and a different value is a conflict reported with the field and the preset's name.
#include <algorithm>
#include <functional>

#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

constexpr std::string_view kAppliedAnnotation = "gpuadmit.io/applied";

struct Change {
  std::string field;
  std::string description;  // short: "env PYTORCH_CUDA_ALLOC_CONF in container \"train\""
  std::function<void(RuleContext&)> apply;
};

struct PresetPlan {
  std::vector<Change> changes;
  std::vector<std::pair<std::string, std::string>> conflicts;  // field, what the user kept
  // Annotations for a pod whose annotations only its workload's own metadata gives (a TaskRun's).
  std::vector<std::string> elsewhere;
};

bool selected(const Preset& preset, const RuleContext& ctx) {
  if (preset.gpu_only && !ctx.is_gpu_pod()) return false;
  const k8s::StringMap& labels = ctx.pod().meta.labels;
  return std::all_of(preset.match_labels.begin(), preset.match_labels.end(), [&](const auto& wanted) {
    const auto it = labels.find(wanted.first);
    return it != labels.end() && it->second == wanted.second;
  });
}

std::vector<const k8s::Container*> target_containers(const Preset& preset, const RuleContext& ctx) {
  std::vector<const k8s::Container*> app;
  std::vector<const k8s::Container*> gpu;
  for (const k8s::Container& c : ctx.pod().containers) {
    if (c.kind != k8s::ContainerKind::kRegular) continue;
    app.push_back(&c);
    if (ctx.gpu_units(c) > 0) gpu.push_back(&c);
  }
  return preset.all_containers || gpu.empty() ? app : gpu;
}

// The element of `elements` (a JSON array, or anything else when absent) whose `key` member is `wanted`.
const nlohmann::json* find_by(const nlohmann::json& elements, std::string_view key,
                              const nlohmann::json& wanted) {
  if (!elements.is_array()) return nullptr;
  for (const nlohmann::json& element : elements) {
    if (element.is_object() && element.contains(key) && element[std::string(key)] == wanted) return &element;
  }
  return nullptr;
}

// `value` as a list to append to: what was not a list (absent, null) becomes an empty one.
nlohmann::json& as_list(nlohmann::json& value) {
  if (!value.is_array()) value = nlohmann::json::array();
  return value;
}

void plan_container(const Preset& preset, const k8s::Container& c, const RuleContext& ctx, PresetPlan& plan) {
  const std::string who = describe(c);
  const nlohmann::json env_list =
      preset.env.empty() ? nlohmann::json() : ctx.current(container_part(c, "env"));
  for (const nlohmann::json& env : preset.env) {
    const nlohmann::json& name = env["name"];
    if (const nlohmann::json* existing = find_by(env_list, "name", name)) {
      if (*existing != env)
        plan.conflicts.emplace_back(field_of(c, ".env"), "env " + name.get<std::string>() + " in " + who);
      continue;
    }
    plan.changes.push_back(
        {field_of(c, ".env"), "env " + name.get<std::string>() + " in " + who,
         [&c, env](RuleContext& into) { as_list(into.edit(container_part(c, "env"))).push_back(env); }});
  }
  for (const auto* list : {&preset.requests, &preset.limits}) {
    const bool requests = list == &preset.requests;
    const k8s::ResourceList& existing = requests ? c.resources.requests : c.resources.limits;
    const char* kind = requests ? "requests" : "limits";
    for (const auto& [resource, quantity] : *list) {
      const std::string field = field_of(c, std::string(".resources.") + kind);
      if (const auto it = existing.find(resource); it != existing.end()) {
        if (it->second != quantity)
          plan.conflicts.emplace_back(field, std::string(kind) + " " + resource + " in " + who);
        continue;
      }
      plan.changes.push_back(
          {field, std::string(kind) + " " + resource + "=" + quantity.to_string() + " in " + who,
           // Init-captures: clang 14, which builds the fuzz targets, cannot capture structured bindings.
           [&c, kind, resource = resource, quantity = quantity](RuleContext& into) {
             into.edit(container_part(c, "resources"))[kind][resource] = quantity.to_string();
           }});
    }
  }
  const nlohmann::json mounts =
      preset.volume_mounts.empty() ? nlohmann::json() : ctx.current(container_part(c, "volumeMounts"));
  for (const nlohmann::json& mount : preset.volume_mounts) {
    const nlohmann::json& path = mount["mountPath"];
    if (const nlohmann::json* existing = find_by(mounts, "mountPath", path)) {
      if (*existing != mount) {
        plan.conflicts.emplace_back(field_of(c, ".volumeMounts"),
                                    "the mount at " + path.get<std::string>() + " in " + who);
      }
      continue;
    }
    plan.changes.push_back({field_of(c, ".volumeMounts"), "mount " + path.get<std::string>() + " in " + who,
                            [&c, mount](RuleContext& into) {
                              as_list(into.edit(container_part(c, "volumeMounts"))).push_back(mount);
                            }});
  }
}

PresetPlan plan_preset(const Preset& preset, const RuleContext& ctx) {
  PresetPlan plan;
  for (const k8s::Container* c : target_containers(preset, ctx)) plan_container(preset, *c, ctx, plan);
  const nlohmann::json tolerations =
      preset.tolerations.empty() ? nlohmann::json() : ctx.current(spec_part("tolerations"));
  for (const nlohmann::json& toleration : preset.tolerations) {
    const bool present = tolerations.is_array() &&
                         std::find(tolerations.begin(), tolerations.end(), toleration) != tolerations.end();
    if (present) continue;
    const std::string key = toleration.value("key", std::string("every taint"));
    plan.changes.push_back({"spec.tolerations", "toleration " + key, [toleration](RuleContext& c) {
                              as_list(c.edit(spec_part("tolerations"))).push_back(toleration);
                            }});
  }
  for (const auto& [key, value] : preset.node_selector) {
    if (const auto it = ctx.pod().node_selector.find(key); it != ctx.pod().node_selector.end()) {
      if (it->second != value) plan.conflicts.emplace_back("spec.nodeSelector", "nodeSelector " + key);
      continue;
    }
    plan.changes.push_back(
        {"spec.nodeSelector", "nodeSelector " + key + "=" + value,
         [key = key, value = value](RuleContext& c) { c.edit(spec_part("nodeSelector"))[key] = value; }});
  }
  const nlohmann::json volumes =
      preset.volumes.empty() ? nlohmann::json() : ctx.current(spec_part("volumes"));
  for (const nlohmann::json& volume : preset.volumes) {
    const nlohmann::json& name = volume["name"];
    if (const nlohmann::json* existing = find_by(volumes, "name", name)) {
      if (*existing != volume)
        plan.conflicts.emplace_back("spec.volumes", "volume " + name.get<std::string>());
      continue;
    }
    plan.changes.push_back({"spec.volumes", "volume " + name.get<std::string>(), [volume](RuleContext& c) {
                              as_list(c.edit(spec_part("volumes"))).push_back(volume);
                            }});
  }
  for (const auto& [key, value] : preset.annotations) {
    if (const auto it = ctx.pod().meta.annotations.find(key); it != ctx.pod().meta.annotations.end()) {
      if (it->second != value) plan.conflicts.emplace_back("metadata.annotations", "annotation " + key);
      continue;
    }
    if (!ctx.can_fix_metadata()) {
      plan.elsewhere.push_back(key + ": " + value);
      continue;
    }
    plan.changes.push_back(
        {"metadata.annotations", "annotation " + key,
         [key = key, value = value](RuleContext& c) { c.edit(metadata_part("annotations"))[key] = value; }});
  }
  return plan;
}

// Said whatever the action: the annotation is the workload's to carry, and denying would deny forever.
void report_elsewhere(RuleContext& ctx, const Preset& preset, const std::vector<std::string>& annotations) {
  std::string list;
  for (const std::string& a : annotations) list += (list.empty() ? "" : ", ") + a;
  ctx.report(
      std::min(ctx.rules().presets.action, Action::kWarn), "metadata.annotations",
      "preset " + preset.name + " selects this pod but its annotations (" + list +
          ") can only reach the pod through the workload's own metadata, which the workload's other "
          "pods share.\nFix: add them to the workload's metadata.annotations if every pod of it should "
          "carry them.",
      "preset " + preset.name + "'s annotations go on the workload: " + list);
}

// "a,b" plus the names not in it yet, in order.
std::string merged_list(std::string existing, const std::vector<std::string>& names) {
  const std::vector<std::string> present = split(existing, ',');
  for (const std::string& name : names) {
    if (std::find(present.begin(), present.end(), name) == present.end()) {
      existing += (existing.empty() ? "" : ",") + name;
    }
  }
  return existing;
}

}  // namespace

void rule_presets(RuleContext& ctx) {
  const Presets& cfg = ctx.rules().presets;
  const bool apply = cfg.action == Action::kEnforce && ctx.can_fix_pod();
  std::vector<std::string> applied;
  std::string change_list;
  for (const Preset& preset : cfg.presets) {
    if (!selected(preset, ctx)) continue;
    PresetPlan plan = plan_preset(preset, ctx);
    for (const auto& [field, what] : plan.conflicts) {
      ctx.report(
          std::min(cfg.action, Action::kWarn), field,
          "preset " + preset.name + " sets " + what +
              " differently; the value in the object is kept (presets never overwrite what was set).\n"
              "Fix: nothing if the object's value is intended; otherwise remove it to take the preset's.",
          "kept " + what + " as set, not preset " + preset.name + "'s value");
    }
    if (!plan.elsewhere.empty()) report_elsewhere(ctx, preset, plan.elsewhere);
    if (plan.changes.empty()) continue;
    if (!apply) {
      std::string missing;
      for (const Change& c : plan.changes) missing += (missing.empty() ? "" : "; ") + c.description;
      ctx.report(cfg.action, plan.changes.front().field,
                 "preset " + preset.name + " selects this pod but is not applied: " + missing +
                     ".\nFix: add them, or let gpuadmit's mutating webhook apply the preset.",
                 "preset " + preset.name + " not applied: " + missing);
      continue;
    }
    for (const Change& change : plan.changes) {
      change.apply(ctx);
      ctx.fixed(change.field, "preset " + preset.name + " added " + change.description);
      change_list += (change_list.empty() ? "" : "; ") + change.description;
    }
    applied.push_back(preset.name);
  }
  if (applied.empty()) return;
  const auto existing = ctx.pod().meta.annotations.find(std::string(kAppliedAnnotation));
  const std::string before = existing == ctx.pod().meta.annotations.end() ? std::string() : existing->second;
  const std::string after = merged_list(before, applied);
  if (after != before) ctx.edit(metadata_part("annotations"))[std::string(kAppliedAnnotation)] = after;
  std::string names;
  for (const std::string& name : applied) names += (names.empty() ? "" : ",") + name;
  ctx.notice("preset" + std::string(applied.size() > 1 ? "s " : " ") + names + " added: " + change_list);
}

// The presets themselves are spec.presets (config reads them with the rest of the policy); the rule's own
// settings are its action.
void read_presets(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.presets.action);
}

}  // namespace gpuadmit::policy
