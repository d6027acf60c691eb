// evaluate(): the policy core's single entry point. Pure: no I/O, no clocks, no globals; the same call
// serves the webhook, `gpuadmit check` and the tests.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/review_budget.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::policy {

struct Request {
  // The object under review, read into a JsonDocument: a review's request.object in the webhook, a
  // manifest read with k8s::OwnedJsonDocument::of in the CLI and the tests. A Pod, a PersistentVolumeClaim
  // or a workload of the policy's kinds (by "kind"; Pod when absent).
  const k8s::JsonValue& object;
  std::string namespace_;  // the request namespace (the object's may be absent on CREATE)
  Mode mode = Mode::kMutate;
  const ClusterView* cluster = nullptr;  // none: cluster-aware rules are skipped and listed as skipped
  // On UPDATE of a workload, the object before: pod templates it already had unchanged are not judged again.
  const k8s::JsonValue* old_object = nullptr;
  // How many pods of this shape run at once (a workload's replicas or parallelism): gpu-quota multiplies.
  std::int64_t replicas = 1;
  // For a workload's pod template: the kind of the controller that will create its pods ("DaemonSet"), as
  // their ownerReferences will say. A pod's own ownerReferences say it for a pod.
  std::string controller_kind = {};
  // A pod that a runtime completes after admission (a KServe predictor, merged with its ServingRuntime):
  // pod-level fixes are not made and most denials become warnings (RuleContext::partial).
  bool partial_pod = false;
  // An assembled pod whose labels and annotations only the workload's own metadata gives (a TaskRun's), or
  // none: gpuadmit cannot write an annotation for that pod alone, so presets say theirs instead.
  bool metadata_elsewhere = false;
  // For a workload's pod template: another template of the same workload asks for GPUs (a Dynamo graph's
  // workers beside its frontend, a RayCluster's workers beside its head), so this one's want of a GPU is
  // its CPU-only role, not an omission.
  bool gpu_siblings = false;
  // What the whole review may spend on device selectors, with the server's deadline; none: evaluate() makes
  // one of kReviewStepBudget steps and no deadline (the CLI), so every caller has a budget.
  ReviewBudget* budget = nullptr;
};

// Evaluates every enabled rule in catalogue order and gathers all findings (never stops at the first).
// In Mutate mode fixes edit copies of the few parts of the object they change (a container's resources, the
// spec's tolerations, the annotations, ...: policy/object_edits.hpp), and the Decision's `patch` is the JSON
// Patch from the object to the fixed one; evaluating the patched object again yields no further fix
// (idempotence). An error
// means the object could not be judged (malformed pod): callers must not treat it as an allow.
Result<Decision> evaluate(const Request& request, const RuleSet& rules);

}  // namespace gpuadmit::policy
