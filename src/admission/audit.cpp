#include "gpuadmit/admission/audit.hpp"

#include <algorithm>
#include <cctype>

#include "gpuadmit/admission/offline_check.hpp"

namespace gpuadmit::admission {
namespace {

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// One object counts once per row, however many of the rule's findings it has (two containers fixed).
void add(Audit& audit, const CheckResult& r, const std::string& rule, AuditVerdict verdict,
         const std::string& message) {
  AuditRow& row = audit.rows[{r.namespace_, rule, verdict}];
  const std::string object = lowered(r.kind) + "/" + r.name;
  if (row.last == object) return;
  row.last = object;
  ++row.count;
  if (row.objects.size() < Audit::kObjectsPerRow) row.objects.push_back(object);
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

std::string controller_uid(const nlohmann::json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  const auto owners = meta->find("ownerReferences");
  if (owners == meta->end() || !owners->is_array()) return {};
  for (const nlohmann::json& owner : *owners) {
    if (owner.is_object() && owner.value("controller", false) && owner.contains("uid") &&
        owner["uid"].is_string())
      return owner["uid"].get<std::string>();
  }
  return {};
}

Result<bool> audit_object(const nlohmann::json& object, const policy::PolicySet& policies,
                          const policy::ClusterView* view, const std::set<std::string>& audited_uids,
                          Audit& audit) {
  if (!object.is_object()) return make_error("expected a Kubernetes object (a mapping), got something else");
  if (object.value("kind", std::string()) == "Pod") {
    const std::string owner = controller_uid(object);
    if (!owner.empty() && audited_uids.contains(owner)) {
      ++audit.left_to_controllers;
      return true;
    }
  }
  std::string ns;
  if (const auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    ns = meta->value("namespace", std::string());
  auto r = check_object(object, policies.for_namespace(ns), ns.empty() ? "default" : ns, view);
  if (!r) return r.error();
  if (!r->checked) {
    ++audit.not_checked;
    return true;
  }
  ++audit.audited;
  audit.namespaces.insert(r->namespace_);
  if (!r->allowed) ++audit.denied;
  if (!r->violations.empty() || !r->fixes.empty() || !r->warn_findings.empty() || !r->audits.empty())
    ++audit.with_findings;
  for (const policy::Finding& v : r->violations) add(audit, *r, v.rule, AuditVerdict::kDenied, v.message);
  for (const policy::Fix& f : r->fixes) add(audit, *r, f.rule, AuditVerdict::kFixed, f.description);
  for (const policy::Finding& w : r->warn_findings) add(audit, *r, w.rule, AuditVerdict::kWarned, w.message);
  for (const policy::Finding& a : r->audits) add(audit, *r, a.rule, AuditVerdict::kAudited, a.message);
  return true;
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
