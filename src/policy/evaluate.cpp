#include "gpuadmit/policy/evaluate.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "assembled_pod.hpp"
#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/policy/catalogue.hpp"
#include "json_diff.hpp"
#include "object_edits.hpp"
#include "over_budget.hpp"
#include "ray_start_params.hpp"
#include "rule_context.hpp"
#include "workload_sites.hpp"

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
  ctx.set_partial(request.partial_pod);
  ctx.set_metadata_elsewhere(request.metadata_elsewhere);
  ctx.set_gpu_siblings(request.gpu_siblings);
  ctx.set_budget(request.budget);
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

std::string prefixed(const std::string& site_field, const std::string& field) {
  return field.empty() ? site_field : site_field + "." + field;
}

// A template's findings, fixes and patches with the template's field and pointer before their own.
void placed(const TemplateSite& site, Decision& d) {
  for (auto* list : {&d.violations, &d.warnings, &d.audits}) {
    for (Finding& f : *list) f.field = prefixed(site.field, f.field);
  }
  for (Fix& f : d.fixes) f.field = prefixed(site.field, f.field);
  for (nlohmann::json& op : d.patch) op["path"] = site.pointer + op["path"].get<std::string>();
}

// Findings, fixes and patches of one site (in the whole object's fields and pointers), moved onto the
// workload: when the object has several templates (or the field shows only a list
// index) what the user reads starts with the template's tag.
void merge(const TemplateSite& site, bool tagged, Decision&& from, Decision& into) {
  const std::string tag = tagged && !site.tag.empty() ? site.tag + ": " : std::string();
  for (auto* list : {&from.violations, &from.warnings, &from.audits}) {
    std::vector<Finding>& target = list == &from.violations ? into.violations
                                   : list == &from.warnings ? into.warnings
                                                            : into.audits;
    for (Finding& f : *list) {
      if (!tag.empty()) f.summary = one_line(tag + f.summary);
      if (site.in_list) f.message = tag + f.message;
      target.push_back(std::move(f));
    }
  }
  for (Fix& f : from.fixes) {
    if (!f.description.empty()) f.description = tag + f.description;
    into.fixes.push_back(std::move(f));
  }
  for (std::string& n : from.notices) into.notices.push_back(one_line(tag + n));
  for (nlohmann::json& op : from.patch) into.patch.push_back(std::move(op));
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

// One template judged as the pod it becomes, or a PodSpec-like object as the pod assembled from it; nothing
// when it is no pod (a template without a spec, which the API server rejects anyway; an object without
// containers, such as an Argo steps template).
Result<std::optional<Decision>> judge_site(const Request& request, const RuleSet& rules,
                                           const TemplateSite& site, std::vector<QuotaShare>* shares,
                                           bool gpu_siblings) {
  const auto judge = [&](const k8s::JsonValue& pod, bool partial, bool metadata_elsewhere) {
    Request sub{pod, request.namespace_, request.mode, request.cluster};
    sub.gpu_siblings = gpu_siblings;
    sub.replicas = site.replicas;
    sub.controller_kind = pod_controller_kind(k8s::string_member(request.object, "kind"));
    sub.partial_pod = partial;
    sub.metadata_elsewhere = metadata_elsewhere;
    sub.budget = request.budget;
    auto result = evaluate_pod(sub, rules);
    if (result && shares != nullptr) {
      if (auto parsed = k8s::parse_pod(pod)) shares->push_back({std::move(*parsed), site.replicas, site.tag});
    }
    return result;
  };
  if (!site.source->pod_spec) {
    const k8s::JsonValue* spec = site.pod_template->find("spec");
    if (spec == nullptr || !spec->is_object()) return std::optional<Decision>();
    auto result = judge(*site.pod_template, site.source->partial, false);
    if (!result) {
      Error e = result.error();
      if (!e.pointer.empty()) e.pointer = site.pointer + e.pointer;
      return e;
    }
    placed(site, *result);
    return std::optional<Decision>(std::move(*result));
  }
  const AssembledPod assembled = assemble_pod(request.object, site);
  if (assembled.container_pointers.empty()) return std::optional<Decision>();
  if (!assembled.invalid_source.empty()) return Error{assembled.invalid_source + ": expected an object", {}};
  if (!assembled.run_time_field.empty()) {
    Decision skipped;
    skipped.evaluated = false;
    skipped.skipped_reason = assembled.run_time_field +
                             " is filled in at run time, so the pod is judged when its controller creates it";
    return std::optional<Decision>(std::move(skipped));
  }
  auto document = k8s::OwnedJsonDocument::of(assembled.pod);
  if (!document) return document.error();
  auto result = judge(document->root(), assembled.partial, !assembled.metadata_target.has_value());
  if (!result) {
    // "spec.containers[0].resources: ..." as the member it came from ("spec.taskSpec.steps[0]...").
    Error e = result.error();
    e.pointer = site_pointer(assembled, e.pointer).value_or("");
    const std::size_t colon = e.message.find(": ");
    if (colon != std::string::npos && e.message.starts_with("spec")) {
      e.message = site_field(assembled, e.message.substr(0, colon)) + e.message.substr(colon);
    }
    return e;
  }
  auto on_site = placed_on_site(assembled, std::move(*result));
  if (!on_site) return on_site.error();
  return std::optional<Decision>(std::move(*on_site));
}

// Every pod template of the workload is judged in place as the pod it will become (a template is a pod's
// metadata and spec), and what is found is reported against the template's own fields and patched there.
Result<Decision> evaluate_workload(const Request& request, const RuleSet& rules, const WorkloadKind& kind) {
  const k8s::JsonValue& object = request.object;
  auto found = find_template_sites(object, kind);
  if (!found) return found.error();
  const std::vector<TemplateSite>& sites = found->sites;
  // On UPDATE only a changed template is judged: relabelling or scaling an existing workload must not
  // start failing (or rolling out) because the policy changed since it was created.
  const auto before = old_templates(request.old_object, kind);
  Decision decision;
  std::size_t judged = 0;
  std::string no_pod;  // the sites that hold no pod: a template without a spec, an object without containers
  std::vector<std::string> later;  // why a site is judged only as the pod its controller creates
  // Whether the quota holds all the templates' pods at once is asked of new objects only: an existing
  // workload's pods are in the quota's use already.
  std::vector<QuotaShare> shares;
  std::vector<QuotaShare>* share_out =
      kind.concurrent && sites.size() > 1 && request.old_object == nullptr && request.cluster != nullptr
          ? &shares
          : nullptr;
  const auto gpus = [&](const TemplateSite& site) { return asks_for_gpus(site, rules); };
  const bool gpu_workload = sites.size() > 1 && std::any_of(sites.begin(), sites.end(), gpus);
  for (const TemplateSite& site : sites) {
    if (unchanged(site, before, request.old_object, object)) continue;
    auto result = judge_site(request, rules, site, share_out, gpu_workload && !gpus(site));
    if (!result) {
      const Error& e = result.error();
      return Error{e.message.starts_with(site.field) ? e.message : site.field + ": " + e.message, e.pointer};
    }
    if (!*result) {
      no_pod += (no_pod.empty() ? "" : ", ") + site.field;
      continue;
    }
    if (!(*result)->evaluated) {
      later.push_back((*result)->skipped_reason);
      continue;
    }
    merge(site, sites.size() > 1 || site.in_list, std::move(**result), decision);
    check_ray_start_params(group_of(object), site, rules, decision);
    ++judged;
  }
  if (judged == 0) {
    decision.evaluated = false;
    decision.skipped_reason = sites.empty()    ? found->none_because
                              : !later.empty() ? later.front()
                              : no_pod.empty() ? "pod templates unchanged"
                                               : "no pod at " + no_pod + ": no spec, or no container";
    return decision;
  }
  for (const std::string& reason : later) decision.notices.push_back(one_line("not judged: " + reason));
  check_workload_gpu_quota(shares, rules, request.cluster, request.namespace_, decision);
  if (request.mode == Mode::kMutate && decision.changed()) {
    // The workload's own audit trail is an edit of its annotations, diffed like a pod's.
    ObjectEdits edits(request.object);
    add_audit_trail(edits, mutated_by(object, decision));
    for (nlohmann::json& op : edits.patch()) decision.patch.push_back(std::move(op));
  }
  report_on_controller(request.object, rules, decision);
  return decision;
}

Result<Decision> evaluate_object(const Request& request, const RuleSet& rules) {
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

}  // namespace

Result<Decision> evaluate(const Request& request, const RuleSet& rules) {
  ReviewBudget own;
  Request budgeted = request;
  if (budgeted.budget == nullptr) budgeted.budget = &own;
  auto decision = evaluate_object(budgeted, rules);
  if (decision) report_over_budget(*budgeted.budget, rules, *decision);
  return decision;
}

}  // namespace gpuadmit::policy
