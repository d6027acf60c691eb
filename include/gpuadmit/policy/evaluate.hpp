// evaluate(): the policy core's single entry point. Pure: no I/O, no clocks, no globals; the same call
// serves the webhook, `gpuadmit check` and the tests.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

// The object under review, as nlohmann::json (the CLI, the tests) or as a JsonDocument value (the webhook).
// What only reads a pod reads the document as it is; whatever needs nlohmann::json (fixes, workloads,
// claims) converts it once, on first use.
class ObjectRef {
 public:
  ObjectRef(const nlohmann::json& object) noexcept : json_(&object) {}  // NOLINT(google-explicit-constructor)
  explicit ObjectRef(const k8s::JsonValue& object) noexcept : document_(&object) {}

  [[nodiscard]] const k8s::JsonValue* document() const noexcept { return document_; }
  [[nodiscard]] const nlohmann::json& json() const;
  // Calls `read` with the document value when there is one, else with the JSON: for walks written once
  // for both (templates over the k8s/json_access.hpp vocabulary).
  template <class F>
  decltype(auto) read(F&& read) const {
    return document_ != nullptr ? read(*document_) : read(json());
  }

 private:
  const nlohmann::json* json_ = nullptr;
  const k8s::JsonValue* document_ = nullptr;
  mutable std::shared_ptr<const nlohmann::json> converted_;  // shared: a copied Request converts once
};

struct Request {
  ObjectRef object;        // a Pod, a PersistentVolumeClaim or a workload of the policy's kinds (by
                           // "kind"; Pod when absent)
  std::string namespace_;  // the request namespace (the object's may be absent on CREATE)
  Mode mode = Mode::kMutate;
  const ClusterView* cluster = nullptr;  // none: cluster-aware rules are skipped and listed as skipped
  // On UPDATE of a workload, the object before: pod templates it already had unchanged are not judged again.
  const nlohmann::json* old_object = nullptr;
  // How many pods of this shape run at once (a workload's replicas or parallelism): gpu-quota multiplies.
  std::int64_t replicas = 1;
  // For a workload's pod template: the kind of the controller that will create its pods ("DaemonSet"), as
  // their ownerReferences will say. A pod's own ownerReferences say it for a pod.
  std::string controller_kind = {};
};

// Evaluates every enabled rule in catalogue order and gathers all findings (never stops at the first).
// In Mutate mode fixes edit copies of the few parts of the object they change (a container's resources, the
// spec's tolerations, the annotations, ...: policy/object_edits.hpp), and the Decision's `patch` is the JSON
// Patch from the object to the fixed one; evaluating the patched object again yields no further fix
// (idempotence). An error
// means the object could not be judged (malformed pod): callers must not treat it as an allow.
Result<Decision> evaluate(const Request& request, const RuleSet& rules);

}  // namespace gpuadmit::policy
