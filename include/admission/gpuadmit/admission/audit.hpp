// `gpuadmit audit`: what admission would say of objects that already exist (created before gpuadmit, or
// before the policy changed), judged by check_object, the code `gpuadmit check` and the webhook run, and
// patching nothing. Kept as counts per namespace, rule and verdict, with a bounded list of objects per row,
// so an audit of 100,000 pods holds rows, not pods.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/policy_set.hpp"

namespace gpuadmit::admission {

// What admission would do about one rule's finding: deny the object, fix it, warn, or record it (audit).
enum class AuditVerdict : std::uint8_t { kDenied, kFixed, kWarned, kAudited };
std::string_view to_string(AuditVerdict verdict) noexcept;

// An object as a PolicyReport names it.
struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
};

struct AuditRow {
  std::size_t count = 0;
  std::vector<std::string> objects;  // "deployment/trainer", at most kObjectsPerRow
  std::vector<ObjectRef> refs;       // the same objects
  std::string example;               // the first object's message, for the report
  std::string last;                  // the object counted last (objects are judged one at a time)
};

struct Audit {
  static constexpr std::size_t kObjectsPerRow = 20;
  // (namespace, rule, verdict) → the objects it holds for.
  std::map<std::tuple<std::string, std::string, AuditVerdict>, AuditRow> rows;
  std::size_t audited = 0;              // objects judged
  std::size_t denied = 0;               // objects admission would deny now
  std::size_t with_findings = 0;        // objects with any finding
  std::size_t left_to_controllers = 0;  // pods of an audited workload: its template was judged
  std::size_t not_checked = 0;          // excluded namespaces, kinds the policy does not judge
  std::set<std::string> namespaces;
  // Per namespace: objects judged, and those with a finding (a PolicyReport's pass count is the difference).
  struct Totals {
    std::size_t audited = 0;
    std::size_t with_findings = 0;
  };
  std::map<std::string, Totals> totals;
};

// Whether the policy judges objects of this apiVersion and kind (Pods, PersistentVolumeClaims, its workload
// kinds): what an audit lists.
bool audited_kind(const policy::RuleSet& rules, std::string_view api_version, std::string_view kind);

// The uid of the controller that owns `object` (ownerReferences[controller=true]), or "".
std::string controller_uid(const nlohmann::json& object);

// Judges one object into `audit`. A pod whose controller's uid is in `audited_uids` is left to it (its
// template was judged, and its findings are the template's). An object that cannot be read is an error.
Result<bool> audit_object(const nlohmann::json& object, const policy::PolicySet& policies,
                          const policy::ClusterView* view, const std::set<std::string>& audited_uids,
                          Audit& audit);

// Judges objects one at a time into an Audit, the same for `gpuadmit audit` and serve's background audit:
// the workloads and claims first (held: they are few), then pods streamed, page by page. A pod whose
// controller was audited is left to it. Only objects in `only_namespace` count when it is set.
class Auditor {
 public:
  Auditor(const policy::PolicySet& policies, const policy::ClusterView* view,
          std::string only_namespace = {});
  Result<bool> audit_held(const std::vector<nlohmann::json>& objects);
  Result<bool> audit_pod(const nlohmann::json& pod);
  [[nodiscard]] const Audit& audit() const { return audit_; }

 private:
  [[nodiscard]] bool wanted(const nlohmann::json& object) const;
  Result<bool> judge(const nlohmann::json& object);

  const policy::PolicySet& policies_;
  const policy::ClusterView* view_;
  std::string namespace_;
  std::set<std::string> uids_;
  Audit audit_;
};

// The report as JSON: {"summary": {...}, "rows": [{namespace, rule, verdict, count, objects, example}]}.
nlohmann::json to_json(const Audit& audit);

}  // namespace gpuadmit::admission
