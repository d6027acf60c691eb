#include "gpuadmit/policy/evaluate.hpp"

#include <algorithm>
#include <array>

#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "json_diff.hpp"
#include "object_edits.hpp"
#include "rule_context.hpp"

namespace gpuadmit::policy {

namespace {

// Sorted and without repeats: the few ids of one review, compared in place rather than copied into a set.
void sort_unique(std::vector<std::string_view>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

std::vector<std::string> Decision::rules_fired() const {
  std::vector<std::string_view> ids;
  ids.reserve(violations.size() + warnings.size() + audits.size() + fixes.size());
  for (const auto* list : {&violations, &warnings, &audits}) {
    for (const Finding& f : *list) {
      ids.emplace_back(f.rule);
    }
  }
  for (const Fix& f : fixes) {
    ids.emplace_back(f.rule);
  }
  sort_unique(ids);
  return {ids.begin(), ids.end()};
}

namespace {

constexpr std::string_view kMutatedBy = "gpuadmit.io/mutated-by";

// The API group of an object or an owner reference, from its apiVersion.
std::string_view group_of(const k8s::JsonValue& object) {
  return api_group(k8s::string_member(object, "apiVersion"));
}

const k8s::JsonValue* annotations_of(const k8s::JsonValue& object) {
  const k8s::JsonValue* meta = object.find("metadata");
  if (meta == nullptr || !meta->is_object()) return nullptr;
  const k8s::JsonValue* annotations = meta->find("annotations");
  return annotations != nullptr && annotations->is_object() ? annotations : nullptr;
}

// The existing gpuadmit.io/mutated-by list joined with the rules that fixed something now, sorted.
std::string mutated_by(const k8s::JsonValue& object, const Decision& decision) {
  std::vector<std::string> existing;
  if (const k8s::JsonValue* annotations = annotations_of(object)) {
    existing = split(k8s::string_member(*annotations, kMutatedBy), ',');
  }
  std::vector<std::string_view> ids(existing.begin(), existing.end());
  for (const Fix& f : decision.fixes) {
    ids.emplace_back(f.rule);
  }
  sort_unique(ids);
  std::string out;
  for (const std::string_view id : ids) {
    if (!out.empty()) {
      out += ',';
    }
    out += id;
  }
  return out;
}

// Sets the gpuadmit.io/mutated-by annotation (annotations that are not a map are replaced, as the API
// server would reject them anyway).
void add_audit_trail(ObjectEdits& edits, std::string trail) {
  nlohmann::json& annotations = edits.edit(metadata_part("annotations"));
  if (!annotations.is_object()) annotations = nlohmann::json::object();
  annotations[std::string(kMutatedBy)] = std::move(trail);
}

// Objects created by a controller gpuadmit already judged (a Deployment's ReplicaSet and its pods, a Job's
// pods, a PyTorchJob's pods) were warned about when the user applied the workload; the controller is the
// only one who would see warnings now, so they are not reported twice. Denials still apply.
std::string checked_controller(const k8s::JsonValue& object, const RuleSet& rules) {
  const k8s::JsonValue* meta = object.find("metadata");
  if (meta == nullptr || !meta->is_object()) return {};
  const k8s::JsonValue* owners = meta->find("ownerReferences");
  if (owners == nullptr || !owners->is_array()) return {};
  for (const k8s::JsonValue& owner : owners->items()) {
    const k8s::JsonValue* controller = owner.find("controller");
    if (controller == nullptr || !k8s::is_boolean(*controller) || !k8s::boolean(*controller)) continue;
    const std::string kind(k8s::string_member(owner, "kind"));
    if (rules.workload_of(group_of(owner), kind) != nullptr)
      return kind + "/" + std::string(k8s::string_member(owner, "name"));
  }
  return {};
}

void report_on_controller(const k8s::JsonValue& object, const RuleSet& rules, Decision& decision) {
  decision.controller = checked_controller(object, rules);
  if (decision.controller.empty()) return;
  decision.warnings.clear();
  decision.notices.clear();
}

Result<Decision> evaluate_pod(const Request& request, const RuleSet& rules) {
  Decision decision;
  // The pod is read from the document as it is: in Validate mode nothing else needs nlohmann::json.
  auto pod = k8s::parse_pod(request.object);
  if (!pod) return pod.error();
  // On CREATE the object may name no namespace (and a template never does): the request's is the one. A
  // template names no owner either: its controller is the request's.
  const auto with_namespace = [&](k8s::Pod p) {
    if (p.meta.namespace_.empty()) p.meta.namespace_ = request.namespace_;
    if (!request.controller_kind.empty()) p.meta.controller_kind = request.controller_kind;
    return p;
  };

  // Validate mode reads the object in place; Mutate mode edits copies of the parts rules fix, made when a
  // rule first edits one, and diffs them at the end.
  ObjectEdits edits(request.object);

  const bool have_cluster = request.cluster != nullptr && request.cluster->snapshot != nullptr;
  RuleContext ctx(edits, with_namespace(std::move(*pod)), rules, request.mode, decision,
                  have_cluster ? request.cluster : nullptr);
  ctx.set_replicas(request.replicas);
  std::string_view last_writer;
  for (const RuleEntry& rule : rule_catalogue()) {
    if (rule.action(rules) == Action::kOff) continue;
    if (rule.cluster_aware && !have_cluster) {
      decision.skipped_rules.emplace_back(rule.id);
      continue;
    }
    // Re-read the view only when a later rule needs it: the last fix of the run is never re-read.
    if (ctx.dirty()) {
      if (auto refreshed = ctx.refresh(); !refreshed) {
        return make_error("internal: rule " + std::string(last_writer) +
                          " produced an invalid pod: " + refreshed.error().message);
      }
#ifndef NDEBUG
      // Debug builds (every test run) check that reading back part by part gives the view of the whole
      // edited object, as parse_pod reads it.
      auto whole = k8s::parse_pod(edits.applied());
      if (!whole || with_namespace(std::move(*whole)) != ctx.pod()) {
        return make_error("internal: after rule " + std::string(last_writer) +
                          ", the pod read back part by part differs from the whole edited pod");
      }
#endif
    }
    ctx.run(rule);
    if (ctx.dirty()) last_writer = rule.id;
  }
  if (request.mode == Mode::kMutate && decision.changed() && !edits.empty()) {
    // The audit trail: `kubectl get -o yaml` shows which rules changed the object.
    add_audit_trail(edits, mutated_by(request.object, decision));
    decision.patch = edits.patch();
  }
  report_on_controller(request.object, rules, decision);
  return decision;
}

// A pod template found in a workload, by the keys that lead to it.
struct TemplateSite {
  const k8s::JsonValue* pod_template = nullptr;
  std::vector<std::string> keys;  // {"spec", "template"}
  std::string label;              // the replica type for Kubeflow jobs ("Worker"), else empty
  std::int64_t replicas = 1;

  [[nodiscard]] std::string pointer() const {  // "/spec/template"
    std::string out;
    for (const std::string& key : keys) k8s::append_pointer_token(out, key);
    return out;
  }
  [[nodiscard]] std::string field() const {  // "spec.template"
    std::string out;
    for (const std::string& key : keys) out += (out.empty() ? "" : ".") + key;
    return out;
  }
};

void find_templates(const k8s::JsonValue& node, const std::vector<std::string>& segments, std::size_t depth,
                    const WorkloadKind& kind, const k8s::JsonValue* parent, TemplateSite site,
                    std::vector<TemplateSite>& out) {
  if (!node.is_object()) return;
  if (depth == segments.size()) {
    site.pod_template = &node;
    if (!kind.replicas.empty() && parent != nullptr) {
      const k8s::JsonValue* replicas = parent->find(kind.replicas);
      if (replicas != nullptr && k8s::is_integer(*replicas)) {
        site.replicas = std::max<std::int64_t>(0, k8s::integer(*replicas));
      }
    }
    out.push_back(std::move(site));
    return;
  }
  const std::string& segment = segments[depth];
  const bool glob = segment.find('*') != std::string::npos;
  for (const k8s::JsonMember& member : node.members()) {
    if (glob ? !glob_match(segment, member.key) : member.key != segment) continue;
    TemplateSite next = site;
    next.keys.emplace_back(member.key);
    // The last wildcard key before the template names the replica type (Master, Worker, Launcher).
    if (glob && depth + 1 < segments.size()) next.label = member.key;
    find_templates(member.value, segments, depth + 1, kind, &node, std::move(next), out);
  }
}

const k8s::JsonValue* at_keys(const k8s::JsonValue& object, const std::vector<std::string>& keys) {
  const k8s::JsonValue* node = &object;
  for (const std::string& key : keys) {
    node = node->find(key);
    if (node == nullptr) return nullptr;
  }
  return node;
}

std::string prefixed(const std::string& site_field, const std::string& field) {
  return field.empty() ? site_field : site_field + "." + field;
}

void merge(const TemplateSite& site, bool several, Decision&& from, Decision& into) {
  const std::string site_field = site.field();
  const std::string site_pointer = site.pointer();
  const std::string tag = several && !site.label.empty() ? site.label + ": " : std::string();
  for (auto* list : {&from.violations, &from.warnings, &from.audits}) {
    std::vector<Finding>& target = list == &from.violations ? into.violations
                                   : list == &from.warnings ? into.warnings
                                                            : into.audits;
    for (Finding& f : *list) {
      f.field = prefixed(site_field, f.field);
      f.summary = tag + f.summary;
      target.push_back(std::move(f));
    }
  }
  for (Fix& f : from.fixes) {
    f.field = prefixed(site_field, f.field);
    if (!f.description.empty()) f.description = tag + f.description;
    into.fixes.push_back(std::move(f));
  }
  for (std::string& n : from.notices) into.notices.push_back(tag + n);
  for (nlohmann::json& op : from.patch) {
    op["path"] = site_pointer + op["path"].get<std::string>();
    into.patch.push_back(std::move(op));
  }
  for (std::string& r : from.skipped_rules) {
    if (std::find(into.skipped_rules.begin(), into.skipped_rules.end(), r) == into.skipped_rules.end()) {
      into.skipped_rules.push_back(std::move(r));
    }
  }
}

// The kind that owns the pods of a workload kind: a Deployment's pods belong to its ReplicaSet, a CronJob's
// to its Job, and every other kind's to the workload itself.
std::string pod_controller_kind(std::string_view workload_kind) {
  if (workload_kind == "Deployment") return "ReplicaSet";
  if (workload_kind == "CronJob") return "Job";
  return std::string(workload_kind);
}

// Every pod template of the workload is judged in place as the pod it will become (a template is a pod's
// metadata and spec), and what is found is reported against the template's own fields and patched there.
Result<Decision> evaluate_workload(const Request& request, const RuleSet& rules, const WorkloadKind& kind) {
  std::vector<TemplateSite> sites;
  const k8s::JsonValue& object = request.object;
  find_templates(object, split(kind.template_path, '.'), 0, kind, nullptr, TemplateSite{}, sites);
  Decision decision;
  std::size_t judged = 0;
  for (const TemplateSite& site : sites) {
    // On UPDATE only a changed template is judged: relabelling or scaling an existing workload must not
    // start failing (or rolling out) because the policy changed since it was created.
    if (request.old_object != nullptr) {
      const k8s::JsonValue* before = at_keys(*request.old_object, site.keys);
      if (before != nullptr && k8s::same_json(*before, *site.pod_template)) continue;
    }
    const k8s::JsonValue* spec = site.pod_template->find("spec");
    if (spec == nullptr || !spec->is_object()) continue;  // the API server rejects it anyway
    Request sub{*site.pod_template, request.namespace_, request.mode, request.cluster};
    sub.replicas = site.replicas;
    sub.controller_kind = pod_controller_kind(k8s::string_member(object, "kind"));
    auto result = evaluate_pod(sub, rules);
    if (!result) {
      const Error& e = result.error();
      return Error{site.field() + ": " + e.message,
                   e.pointer.empty() ? std::string() : site.pointer() + e.pointer};
    }
    merge(site, sites.size() > 1, std::move(*result), decision);
    ++judged;
  }
  if (judged == 0) {
    decision.evaluated = false;
    decision.skipped_reason =
        sites.empty() ? "no pod template at " + kind.template_path : "pod templates unchanged";
    return decision;
  }
  if (request.mode == Mode::kMutate && decision.changed()) {
    // The workload's own audit trail is an edit of its annotations, diffed like a pod's.
    ObjectEdits edits(request.object);
    add_audit_trail(edits, mutated_by(object, decision));
    for (nlohmann::json& op : edits.patch()) decision.patch.push_back(std::move(op));
  }
  report_on_controller(request.object, rules, decision);
  return decision;
}

}  // namespace

Result<Decision> evaluate(const Request& request, const RuleSet& rules) {
  Decision decision;
  if (rules.is_excluded(request.namespace_)) {
    decision.evaluated = false;
    decision.skipped_reason = "namespace " + request.namespace_ + " is excluded by the policy";
    return decision;
  }
  const k8s::JsonValue& object = request.object;
  const std::string kind(k8s::string_member(object, "kind"));
  if (kind == "PersistentVolumeClaim") {
    // Claims are rare and small, and their rule reads them as nlohmann::json.
    const nlohmann::json claim = k8s::to_json(object);
    if (auto parsed = checkpoint_claim_parse_check(claim); !parsed) return parsed.error();
    if (request.mode == Mode::kValidate && rules.checkpoint_pvc.action != Action::kOff) {
      const ClusterSnapshot* snapshot =
          request.cluster != nullptr ? request.cluster->snapshot.get() : nullptr;
      check_checkpoint_claim(claim, rules, snapshot, decision);
    }
    return decision;
  }
  if (kind.empty() || kind == "Pod") return evaluate_pod(request, rules);
  if (const WorkloadKind* workload = rules.workload_of(group_of(object), kind)) {
    return evaluate_workload(request, rules, *workload);
  }
  decision.evaluated = false;
  decision.skipped_reason = "gpuadmit does not check " + kind + " objects";
  return decision;
}

}  // namespace gpuadmit::policy
