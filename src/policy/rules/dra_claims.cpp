// dra-claims: a pod's Dynamic Resource Allocation claims can be allocated. Kubernetes admits a pod whose
// ResourceClaim, template or device class does not exist, whose selector matches no device or reads an
// attribute the devices lack, or that asks one node for more devices than any has, and the pod then waits
// in Pending with "cannot allocate all claims" or no event at all. This rule says which, and what exists.
#include <algorithm>
#include <string>

#include "../dra_devices.hpp"
#include "../dra_fit.hpp"
#include "../rule_context.hpp"

namespace gpuadmit::policy {
namespace {

std::string claim_quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string suggestion(const std::string& name, const std::vector<std::string>& candidates) {
  const std::vector<std::string> near = nearest_names(name, candidates);
  if (near.empty()) return "";
  std::string out = "; did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i) out += (i == 0 ? "" : " or ") + claim_quoted(near[i]);
  return out + "?";
}

template <class T>
std::vector<std::string> names_in(const SharedList<T>& list, const std::string& ns) {
  std::vector<std::string> out;
  for (const T& item : list) {
    if (item.meta.namespace_ == ns) out.push_back(item.meta.name);
  }
  return out;
}

// A claim or template not in view: never a denial. kubectl apply creates a file's template a moment before
// its pod, a controller may create one after it (NVIDIA's DRA driver makes a ComputeDomain's channel
// template), and the view may lag either: Kubernetes accepts the pod, which waits until the object exists.
void report_missing_claim(RuleContext& ctx, const PodClaim& claim, const std::string& field) {
  const ClusterSnapshot& cluster = *ctx.cluster();
  const std::string& ns = ctx.pod().meta.namespace_;
  const bool by_name = !claim.ref->claim_name.empty();
  const std::string kind = by_name ? "ResourceClaim" : "ResourceClaimTemplate";
  const std::string& name = by_name ? claim.ref->claim_name : claim.ref->template_name;
  const std::string near = by_name ? suggestion(name, names_in(cluster.resource_claims, ns))
                                   : suggestion(name, names_in(cluster.claim_templates, ns));
  const std::string what = kind + " " + claim_quoted(name) + " is not in namespace " + ns + near;
  ctx.report(
      std::min(ctx.rules().dra_claims.action, Action::kWarn),
      field + (by_name ? ".resourceClaimName" : ".resourceClaimTemplateName"),
      "resource claim " + claim_quoted(claim.ref->name) + ": " + what +
          " (as gpuadmit's view of the cluster last saw it). Kubernetes accepts the pod and the pod waits "
          "in Pending until it exists" +
          (by_name ? ", with no event" : ", with only a controller event") +
          "; a controller may create it after the pod, as NVIDIA's DRA driver does for a ComputeDomain's "
          "channel template.\nFix: if nothing creates it, create the " +
          kind + " (kubectl get " + (by_name ? "resourceclaims" : "resourceclaimtemplates") + " -n " + ns +
          "), or correct the name.",
      what + "; the pod waits for it");
}

std::string claim_source(const PodClaim& claim) {
  return claim.ref->claim_name.empty() ? "ResourceClaimTemplate " + claim_quoted(claim.ref->template_name)
                                       : "ResourceClaim " + claim_quoted(claim.ref->claim_name);
}

// The classes a claim's requests name that do not exist; true when all exist. A warning, as for a missing
// template: a DRA driver's install creates its classes, possibly after the workloads that use them (one
// `kubectl apply` of a folder, a GitOps sync), and the scheduler allocates the claim once the class exists.
bool classes_exist(RuleContext& ctx, const PodClaim& claim, const std::string& field) {
  const ClusterSnapshot& cluster = *ctx.cluster();
  bool all = true;
  for (const k8s::DeviceRequest& request : claim.spec->requests) {
    for (const k8s::DeviceSubRequest& sub : request.alternatives) {
      if (sub.device_class.empty() || cluster.device_class(sub.device_class) != nullptr) continue;
      all = false;
      std::vector<std::string> names;
      for (const k8s::DeviceClass& cls : cluster.device_classes) names.push_back(cls.name);
      std::string have;
      for (std::size_t i = 0; i < names.size() && i < 8; ++i) have += (i == 0 ? "" : ", ") + names[i];
      const std::string missing = "DeviceClass " + claim_quoted(sub.device_class) + " does not exist";
      const std::string near = suggestion(sub.device_class, names);
      const std::string what = missing + near;
      ctx.report(std::min(ctx.rules().dra_claims.action, Action::kWarn), field,
                 "request " + claim_quoted(request.name) + " of " + claim_source(claim) + ": " + what +
                     " (device classes here: " + (have.empty() ? "none" : have) +
                     "). The scheduler leaves the pod Pending (\"device class " + sub.device_class +
                     " does not exist\"): the pod waits in Pending until it exists.\nFix: set "
                     "deviceClassName to one of the device classes above, or install the DRA driver that "
                     "provides " +
                     claim_quoted(sub.device_class) + ".",
                 // The summary says the pod waits before the suggestions, which a 120-character line may cut.
                 missing + "; the pod waits for it" + near);
    }
  }
  return all;
}

void warn_sharing(RuleContext& ctx, const PodClaim& claim, const std::string& field) {
  for (const k8s::DeviceRequest& request : claim.spec->requests) {
    if (std::any_of(request.alternatives.begin(), request.alternatives.end(),
                    [](const k8s::DeviceSubRequest& s) { return s.admin_access; })) {
      ctx.report(
          Action::kWarn, field,
          "request " + claim_quoted(request.name) + " of " + claim_source(claim) +
              " sets adminAccess: it gets devices even while other pods use them, for monitoring "
              "and maintenance, not for work of its own.\nFix: remove adminAccess unless this is an "
              "admin tool.",
          "request " + claim_quoted(request.name) + " sets adminAccess (devices shared with their users)");
    }
  }
  if (claim.ref->claim_name.empty() || ctx.replicas() <= 1) return;
  ctx.report(Action::kWarn, field + ".resourceClaimName",
             "ResourceClaim " + claim_quoted(claim.ref->claim_name) + " is shared by all " +
                 std::to_string(ctx.replicas()) +
                 " pods of this workload: they all land on the node its devices are on and share them.\nFix: "
                 "use resourceClaimTemplateName, so that each pod gets a claim of its own.",
             "ResourceClaim " + claim_quoted(claim.ref->claim_name) + " shared by " +
                 std::to_string(ctx.replicas()) + " replicas: one device set for all");
}

}  // namespace

void rule_dra_claims(RuleContext& ctx) {
  const k8s::Pod& pod = ctx.pod();
  const ClusterSnapshot* cluster = ctx.cluster();
  if (pod.resource_claims.empty() || cluster == nullptr || !cluster->dra_listed) return;
  const std::vector<PodClaim> claims = resolve_claims(pod, cluster);
  bool complete = true;
  for (const PodClaim& claim : claims) {
    const std::string field = "spec.resourceClaims[" + std::to_string(claim.index) + "]";
    if (claim.ref->claim_name.empty() && claim.ref->template_name.empty()) continue;  // the API server's
    if (claim.spec == nullptr) {
      report_missing_claim(ctx, claim, field);
      complete = false;
      continue;
    }
    if (!classes_exist(ctx, claim, field)) complete = false;
    warn_sharing(ctx, claim, field);
  }
  if (!complete) return;  // what can be allocated is judged once the claims say what they are
  const PodFit fit = fit_claims(pod, claims, *cluster, ctx.budget());
  if (fit.fits) return;
  std::string summary;
  const std::string message = describe_unfit(fit, claims, summary);
  // No node of the cluster has a device of a request's class at all: a pool at zero may bring such nodes, as
  // it may bring a GPU resource no node offers, so this gets node-fit's noNodeOffers action. Devices of the
  // class on nodes the pod keeps away from are a certain Pending, as node-fit judges extended resources.
  const bool none_of_class = std::any_of(fit.requests.begin(), fit.requests.end(),
                                         [](const RequestSurvey& s) { return !s.class_anywhere; });
  const Action action = none_of_class
                            ? std::min(ctx.rules().dra_claims.action, ctx.rules().node_fit.no_node_offers)
                            : ctx.rules().dra_claims.action;
  if (!message.empty()) ctx.report(action, "spec.resourceClaims", message, summary);
}

void read_dra_claims(ParameterReader& r, RuleSet& rules) {
  r.action("action", rules.dra_claims.action);
  r.strings("gpuDeviceClasses", rules.dra_claims.gpu_device_classes);
  r.action("overBudget", rules.dra_claims.over_budget);
}

}  // namespace gpuadmit::policy
