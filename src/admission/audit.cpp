#include "gpuadmit/admission/audit.hpp"

#include <algorithm>
#include <cctype>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/k8s/json_paths.hpp"

namespace gpuadmit::admission {
namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// One object counts once per row, however many of the rule's findings it has (two containers fixed).
void add(Audit& audit, const CheckResult& r, const ObjectRef& ref, const std::string& rule,
         AuditVerdict verdict, const std::string& message) {
  AuditRow& row = audit.rows[{r.namespace_, rule, verdict}];
  const std::string object = lowered(r.kind) + "/" + r.name;
  if (row.last == object) return;
  row.last = object;
  ++row.count;
  if (row.objects.size() < Audit::kObjectsPerRow) {
    row.objects.push_back(object);
    row.refs.push_back(ref);
  }
  if (row.example.empty()) row.example = message;
}

}  // namespace

std::string_view to_string(AuditVerdict verdict) noexcept {
  switch (verdict) {
    case AuditVerdict::kDenied:
      return "deny";
    case AuditVerdict::kFixed:
      return "fix";
    case AuditVerdict::kWarned:
      return "warn";
    case AuditVerdict::kAudited:
      return "audit";
  }
  return "audit";
}

bool audited_kind(const policy::RuleSet& rules, std::string_view api_version, std::string_view kind) {
  if (api_version == "v1" && (kind == "Pod" || kind == "PersistentVolumeClaim")) return true;
  return rules.workload_of(policy::api_group(api_version), kind) != nullptr;
}

Result<bool> audit_object(const nlohmann::json& object, const policy::PolicySet& policies,
                          const policy::ClusterView* view, const std::set<std::string>& audited_uids,
                          Audit& audit) {
  if (!object.is_object()) return make_error("expected a Kubernetes object (a mapping), got something else");
  if (object.value("kind", std::string()) == "Pod") {
    const std::string owner = k8s::controller_uid(object);
    if (!owner.empty() && audited_uids.contains(owner)) {
      ++audit.left_to_controllers;
      return true;
    }
  }
  const std::string ns = k8s::text_at(object, {"metadata", "namespace"});
  auto r = check_object(object, policies.for_namespace(ns), ns.empty() ? "default" : ns, view);
  if (!r) return r.error();
  if (!r->checked) {
    ++audit.not_checked;
    return true;
  }
  ++audit.audited;
  audit.namespaces.insert(r->namespace_);
  Audit::Totals& totals = audit.totals[r->namespace_];
  ++totals.audited;
  if (!r->allowed) ++audit.denied;
  if (!r->violations.empty() || !r->fixes.empty() || !r->warn_findings.empty() || !r->audits.empty()) {
    ++audit.with_findings;
    ++totals.with_findings;
  }
  const ObjectRef ref{object.value("apiVersion", std::string()), r->kind, r->name,
                      k8s::text_at(object, {"metadata", "uid"})};
  for (const policy::Finding& v : r->violations)
    add(audit, *r, ref, v.rule, AuditVerdict::kDenied, v.message);
  for (const policy::Fix& f : r->fixes) add(audit, *r, ref, f.rule, AuditVerdict::kFixed, f.description);
  for (const policy::Finding& w : r->warn_findings)
    add(audit, *r, ref, w.rule, AuditVerdict::kWarned, w.message);
  for (const policy::Finding& a : r->audits) add(audit, *r, ref, a.rule, AuditVerdict::kAudited, a.message);
  return true;
}

Auditor::Auditor(const policy::PolicySet& policies, const policy::ClusterView* view,
                 std::string only_namespace)
    : policies_(policies), view_(view), namespace_(std::move(only_namespace)) {}

Result<bool> Auditor::audit_held(const std::vector<nlohmann::json>& objects) {
  // Objects whose controllers are audited are left to them; so their uids are needed first.
  for (const nlohmann::json& o : objects) {
    if (std::string uid = k8s::text_at(o, {"metadata", "uid"}); !uid.empty()) uids_.insert(std::move(uid));
  }
  for (const nlohmann::json& o : objects) {
    if (!wanted(o)) continue;
    if (const std::string owner = k8s::controller_uid(o); !owner.empty() && uids_.contains(owner)) {
      ++audit_.left_to_controllers;
      continue;
    }
    if (auto done = judge(o); !done) return done;
  }
  return true;
}

Result<bool> Auditor::audit_pod(const nlohmann::json& pod) {
  return wanted(pod) ? judge(pod) : Result<bool>(true);
}

bool Auditor::wanted(const nlohmann::json& object) const {
  return namespace_.empty() || k8s::text_at(object, {"metadata", "namespace"}) == namespace_;
}

Result<bool> Auditor::judge(const nlohmann::json& object) {
  auto done = audit_object(object, policies_, view_, uids_, audit_);
  if (!done) {
    return make_error(object.value("kind", std::string("object")) + " " +
                      k8s::text_at(object, {"metadata", "namespace"}) + "/" +
                      k8s::text_at(object, {"metadata", "name"}) + ": " + done.error().message);
  }
  return done;
}

nlohmann::json to_json(const Audit& audit) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, row] : audit.rows) {
    const auto& [ns, rule, verdict] = key;
    rows.push_back({{"namespace", ns},
                    {"rule", rule},
                    {"verdict", std::string(to_string(verdict))},
                    {"count", row.count},
                    {"objects", row.objects},
                    {"example", row.example}});
  }
  return {{"summary",
           {{"audited", audit.audited},
            {"denied", audit.denied},
            {"withFindings", audit.with_findings},
            {"leftToControllers", audit.left_to_controllers},
            {"notChecked", audit.not_checked},
            {"namespaces", audit.namespaces.size()}}},
          {"rows", rows}};
}

}  // namespace gpuadmit::admission
