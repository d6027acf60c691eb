#include "gpuadmit/admission/policy_report.hpp"

namespace gpuadmit::admission {
namespace {

struct ReportOutcome {
  std::string_view result;    // PolicyReport's pass|fail|warn|error|skip
  std::string_view severity;  // critical|high|medium|low|info
};

// An object admission would deny, fix or record breaks the policy now (Kyverno reports an Audit-mode
// failure as "fail" too); one admission would only warn about is a "warn".
ReportOutcome outcome_of(AuditVerdict verdict) {
  switch (verdict) {
    case AuditVerdict::kDenied:
      return {"fail", "high"};
    case AuditVerdict::kFixed:
      return {"fail", "medium"};
    case AuditVerdict::kAudited:
      return {"fail", "low"};
    case AuditVerdict::kWarned:
      return {"warn", "low"};
  }
  return {"warn", "low"};
}

// At most `limit` bytes, not cutting a UTF-8 sequence in two.
std::string cut(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t end = limit - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) --end;
  return text.substr(0, end) + "...";
}

nlohmann::json resources_of(const AuditRow& row, const std::string& ns) {
  nlohmann::json resources = nlohmann::json::array();
  for (const ObjectRef& ref : row.refs) {
    nlohmann::json r{
        {"apiVersion", ref.api_version}, {"kind", ref.kind}, {"name", ref.name}, {"namespace", ns}};
    if (!ref.uid.empty()) r["uid"] = ref.uid;
    resources.push_back(std::move(r));
  }
  return resources;
}

}  // namespace

std::vector<std::string> report_namespaces(const Audit& audit) {
  std::vector<std::string> out;
  out.reserve(audit.totals.size());
  for (const auto& [ns, totals] : audit.totals) out.push_back(ns);
  return out;
}

nlohmann::json policy_report(const Audit& audit, const std::string& ns, std::int64_t now_seconds) {
  nlohmann::json results = nlohmann::json::array();
  std::size_t failed = 0;
  std::size_t warned = 0;
  for (const auto& [key, row] : audit.rows) {
    const auto& [row_ns, rule, verdict] = key;
    if (row_ns != ns) continue;
    const ReportOutcome outcome = outcome_of(verdict);
    (outcome.result == "fail" ? failed : warned) += row.count;
    if (results.size() == kMaxResults) continue;
    results.push_back({{"source", "gpuadmit"},
                       {"policy", "gpuadmit"},
                       {"rule", rule},
                       {"category", "GPU"},
                       {"result", outcome.result},
                       {"severity", outcome.severity},
                       {"scored", true},
                       {"message", cut(row.example, kMaxMessageBytes)},
                       {"timestamp", {{"seconds", now_seconds}, {"nanos", 0}}},
                       {"resources", resources_of(row, ns)},
                       // Property values are strings in the CRD's schema.
                       {"properties",
                        {{"action", std::string(to_string(verdict))},
                         {"objects", std::to_string(row.count)},
                         {"objectsListed", std::to_string(row.refs.size())}}}});
  }
  std::size_t passed = 0;
  if (const auto totals = audit.totals.find(ns); totals != audit.totals.end())
    passed = totals->second.audited - totals->second.with_findings;
  return {{"apiVersion", "wgpolicyk8s.io/v1alpha2"},
          {"kind", "PolicyReport"},
          {"metadata",
           {{"name", kPolicyReportName},
            {"namespace", ns},
            {"labels", {{std::string(kManagedByLabel), "gpuadmit"}}}}},
          {"summary", {{"pass", passed}, {"fail", failed}, {"warn", warned}, {"error", 0}, {"skip", 0}}},
          {"results", results}};
}

}  // namespace gpuadmit::admission
