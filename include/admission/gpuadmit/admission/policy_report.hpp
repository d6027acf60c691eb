// PolicyReports (wgpolicyk8s.io/v1alpha2, the format Kyverno and Kubewarden write and Policy Reporter shows)
// from an Audit: one per namespace, named "gpuadmit", with one result per rule and verdict naming the
// objects it holds for. Bounded by construction: a namespace has at most (rules × 4) rows, each naming at
// most Audit::kObjectsPerRow objects, with its message cut at kMaxMessageBytes; kMaxResults caps it again,
// so a report stays far below etcd's 1.5 MiB object limit whatever the cluster holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/admission/audit.hpp"

namespace gpuadmit::admission {

inline constexpr std::string_view kPolicyReportName = "gpuadmit";
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::size_t kMaxResults = 200;
inline constexpr std::size_t kMaxMessageBytes = 2048;

// The namespaces the audit judged objects in: each gets a report, even one with only passes.
std::vector<std::string> report_namespaces(const Audit& audit);

// The report of namespace `ns`, ready to apply (server-side apply takes the whole object).
// `now_seconds`: Unix time of the audit (the core reads no clock).
nlohmann::json policy_report(const Audit& audit, const std::string& ns, std::int64_t now_seconds);

}  // namespace gpuadmit::admission
