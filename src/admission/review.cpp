#include "gpuadmit/admission/review.hpp"

#include <cctype>
#include <optional>

#include "gpuadmit/admission/json_patch.hpp"
#include "gpuadmit/admission/messages.hpp"
#include "gpuadmit/k8s/json_access.hpp"
#include "gpuadmit/k8s/json_document.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "gpuadmit/k8s/json_output.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "gpuadmit/policy/text.hpp"

namespace gpuadmit::admission {
namespace {

using nlohmann::json;

// An AdmissionReview's object can carry managedFields nested well past a pod's own depth.
constexpr k8s::JsonLimits kReviewLimits{7 * 1024 * 1024, 128};

// What no rule and no response reads: parsed for syntax, never built (a third of a pod's bytes are its
// managedFields). Workload kinds keep their status out the same way. The envelope's resource and request*
// echoes and the user's groups and extras are a fifth of the values of a small pod's review.
const std::vector<k8s::JsonPath> kNeverRead{
    {"request", "object", "metadata", "managedFields"},
    {"request", "object", "status"},
    {"request", "oldObject", "metadata", "managedFields"},
    {"request", "oldObject", "status"},
    {"request", "options"},
    {"request", "resource"},
    {"request", "requestKind"},
    {"request", "requestResource"},
    {"request", "requestSubResource"},
    {"request", "userInfo", "uid"},
    {"request", "userInfo", "groups"},
    {"request", "userInfo", "extra"},
};

std::string string_or_empty(const k8s::JsonValue& object, std::string_view key) {
  return std::string(k8s::string_member(object, key));
}

const k8s::JsonValue* object_member(const k8s::JsonValue& object, std::string_view key) {
  const k8s::JsonValue* value = object.find(key);
  return value != nullptr && value->is_object() ? value : nullptr;
}

// The response object. Members print in sorted order, as nlohmann's dump() would give them.
struct Response {
  bool allowed = true;
  std::string audit_findings;  // auditAnnotations.findings (the API server prefixes the webhook's name)
  std::string patch;           // the JSON Patch, as JSON text; "" for none
  int status_code = 0;         // 0: no status
  std::string status_reason;
  std::string status_message;
  std::vector<std::string> warnings;
};

std::string response_text(const std::string& uid, const Response& r) {
  std::string out = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":)";
  out += r.allowed ? "true" : "false";
  if (!r.audit_findings.empty()) {
    out += R"(,"auditAnnotations":{"findings":)";
    k8s::append_json_string(out, r.audit_findings);
    out += '}';
  }
  if (!r.patch.empty()) {
    out += R"(,"patch":")";
    append_base64(out, r.patch);  // base64 needs no JSON escaping
    out += R"(","patchType":"JSONPatch")";
  }
  if (r.status_code != 0) {
    out += R"(,"status":{"code":)" + std::to_string(r.status_code) + R"(,"message":)";
    k8s::append_json_string(out, r.status_message);
    out += R"(,"reason":)";
    k8s::append_json_string(out, r.status_reason);
    out += '}';
  }
  out += R"(,"uid":)";
  k8s::append_json_string(out, uid);
  if (!r.warnings.empty()) {
    out += R"(,"warnings":[)";
    for (std::size_t i = 0; i < r.warnings.size(); ++i) {
      if (i > 0) out += ',';
      k8s::append_json_string(out, r.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

// What a review says about itself: for the answer, the log line and the metrics.
struct Envelope {
  Outcome facts;  // uid, kind, namespace, name, operation, user
  std::string_view group;
  const k8s::JsonValue* object = nullptr;
  const k8s::JsonValue* old_object = nullptr;
  std::string_view sub_resource;
};

// "pod", "claim", "deployment", "pytorchjob": how a denial names the object (kubectl's own lower-case kinds).
std::string noun(std::string_view kind) {
  if (kind == "PersistentVolumeClaim") return "claim";
  std::string out(kind);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> warning_summaries(const policy::Decision& decision) {
  std::vector<std::string> out;
  out.reserve(decision.warnings.size());
  for (const policy::Finding& f : decision.warnings) out.push_back(f.summary);
  return out;
}

// The response constructors: each verdict is one function from the facts (and the decision) to the answer.

Outcome answer(Outcome out, Verdict verdict, const Response& response) {
  out.verdict = verdict;
  out.warnings = response.warnings.size();
  out.body = response_text(out.uid, response);
  return out;
}

// Not an AdmissionReview: HTTP 400 and a one-line reason.
Outcome malformed(Outcome out, const std::string& reason) {
  out.http_status = 400;
  out.verdict = Verdict::kMalformed;
  out.error = policy::one_line(reason, 300);
  out.body = "malformed AdmissionReview: " + out.error + "\n";
  return out;
}

// Nothing gpuadmit judges (another operation, a subresource, a kind outside the policy).
Outcome allowed(Outcome out) {
  return answer(std::move(out), Verdict::kAllowed, Response{});
}

// Could not decide: denied with 500, so failurePolicy is not what decides, and said plainly.
Outcome error(Outcome out, std::string why) {
  out.error = std::move(why);
  Response response;
  response.allowed = false;
  response.status_code = 500;
  response.status_reason = "InternalError";
  response.status_message = "gpuadmit could not decide on this " + out.kind + ": " + out.error;
  return answer(std::move(out), Verdict::kError, response);
}

// What every judged answer carries: the rules that fired, and the audit findings in auditAnnotations.
Response judged(Outcome& out, const policy::Decision& decision) {
  out.rules_fired = decision.rules_fired();
  out.audits = decision.audits;
  Response response;
  if (!decision.audits.empty()) {
    std::string text;
    for (const policy::Finding& f : decision.audits) text += (text.empty() ? "" : "; ") + f.summary;
    response.audit_findings = policy::one_line(text, 1000);
  }
  return response;
}

// Violations: 403 with every problem and the fix for each. The warnings go too: kubectl prints them above
// the denial, so one apply shows every problem (a claim that cannot bind as well as the GPUs no node has).
Outcome denied(Outcome out, const policy::Decision& decision) {
  Response response = judged(out, decision);
  response.allowed = false;
  response.status_code = 403;
  response.status_reason = "Forbidden";
  response.status_message =
      denial_message(decision, noun(out.kind), out.name.empty() ? "<unnamed>" : out.name);
  response.warnings = warning_lines(warning_summaries(decision));
  return answer(std::move(out), Verdict::kDenied, response);
}

// An object annotated gpuadmit.io/probe (any non-empty value) gets this warning from /validate, and the
// annotation gpuadmit.io/probe-reply from /mutate, whatever the policy says, so `helm test` (or anyone) can
// tell that the API server really calls gpuadmit, under any policy, on any cluster, without a GPU. The
// annotation is what a hook without a shell can check: kubectl's jsonpath output with
// --allow-missing-template-keys=false fails when it is missing.
constexpr std::string_view kProbeAnnotation = "gpuadmit.io/probe";
constexpr std::string_view kProbeWarning = "gpuadmit.io/probe: reviewed by gpuadmit";
constexpr std::string_view kProbeReplyPath = "/metadata/annotations/gpuadmit.io~1probe-reply";
constexpr std::string_view kProbeReply = "mutated by gpuadmit";

bool is_probe(const k8s::JsonValue& object) {
  const k8s::JsonValue* meta = object_member(object, "metadata");
  const k8s::JsonValue* annotations = meta != nullptr ? object_member(*meta, "annotations") : nullptr;
  return annotations != nullptr && !k8s::string_member(*annotations, kProbeAnnotation).empty();
}

// /mutate's allow: the fixes as a JSON Patch (with the probe's reply), and the notices about them as
// warnings (/validate shows the findings' warnings, once).
Outcome patched(Outcome out, const policy::Decision& decision, bool probe) {
  Response response = judged(out, decision);
  response.warnings = warning_lines(decision.notices);
  out.patch_operations = decision.patch.size();
  if (decision.patch.empty() && !probe) return answer(std::move(out), Verdict::kAllowed, response);
  if (probe) {
    // The probe annotation exists, so the annotations map does: "add" sets the member (or replaces it).
    nlohmann::json patch = decision.patch;
    patch.push_back({{"op", "add"}, {"path", kProbeReplyPath}, {"value", kProbeReply}});
    response.patch = patch.dump();
  } else {
    response.patch = decision.patch.dump();  // every other review: no copy of the patch
  }
  return answer(std::move(out), Verdict::kPatched, response);
}

// /validate's allow: the warn findings as kubectl warnings (and the probe's answer).
Outcome warned(Outcome out, const policy::Decision& decision, bool probe) {
  Response response = judged(out, decision);
  std::vector<std::string> summaries = warning_summaries(decision);
  // First: kubectl shows at most the lines warning_lines keeps, and the probe's must be one of them.
  if (probe) summaries.insert(summaries.begin(), std::string(kProbeWarning));
  response.warnings = warning_lines(summaries);
  return answer(std::move(out), Verdict::kAllowed, response);
}

// Reads the envelope's facts, or says why the body is no AdmissionReview.
std::optional<std::string> read_envelope(const k8s::JsonValue& review, Envelope& envelope) {
  if (!review.is_object()) return "the body is not a JSON object";
  if (k8s::string_member(review, "apiVersion") != "admission.k8s.io/v1" ||
      k8s::string_member(review, "kind") != "AdmissionReview") {
    return "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview "
           "(register the webhook with admissionReviewVersions: [v1])";
  }
  const k8s::JsonValue* request = object_member(review, "request");
  if (request == nullptr) return "missing request";
  Outcome& facts = envelope.facts;
  facts.uid = string_or_empty(*request, "uid");
  if (facts.uid.empty()) return "request.uid is missing";
  facts.operation = string_or_empty(*request, "operation");
  facts.namespace_ = string_or_empty(*request, "namespace");
  facts.name = string_or_empty(*request, "name");
  if (const k8s::JsonValue* kind = object_member(*request, "kind")) {
    facts.kind = string_or_empty(*kind, "kind");
    envelope.group = k8s::string_member(*kind, "group");
  }
  if (const k8s::JsonValue* user = object_member(*request, "userInfo")) {
    facts.user = string_or_empty(*user, "username");
  }
  envelope.object = object_member(*request, "object");
  envelope.old_object = object_member(*request, "oldObject");
  envelope.sub_resource = k8s::string_member(*request, "subResource");
  // The policy dispatches on the object's own kind; one that disagrees with request.kind is no review the
  // API server sends, and judging by either kind could pass the other unjudged.
  if (envelope.object != nullptr) {
    const std::string_view object_kind = k8s::string_member(*envelope.object, "kind");
    if (!object_kind.empty() && object_kind != facts.kind)
      return "request.kind is " + facts.kind + " but request.object.kind is " + std::string(object_kind);
    // The API server always sends both; without them the object would be judged as a Pod, or as no
    // workload, and pass.
    if (object_kind.empty() && !facts.kind.empty() && facts.kind != "Pod")
      return "request.object has no kind (request.kind is " + facts.kind + ")";
    const std::string_view api_version = k8s::string_member(*envelope.object, "apiVersion");
    if (!api_version.empty() && policy::api_group(api_version) != envelope.group) {
      return "request.kind is " + (envelope.group.empty() ? "" : std::string(envelope.group) + "/") +
             facts.kind + " but request.object.apiVersion is " + std::string(api_version);
    }
  }
  if (facts.name.empty() && envelope.object != nullptr) {
    if (const k8s::JsonValue* meta = object_member(*envelope.object, "metadata")) {
      const std::string_view generate_name = k8s::string_member(*meta, "generateName");
      if (!generate_name.empty()) facts.name = std::string(generate_name) + "*";
    }
  }
  return std::nullopt;
}

// A ClusterGPUPolicy or GPUPolicy on CREATE or UPDATE: judged by the policy loader, not by the rules.
bool is_policy_object(const Envelope& envelope) {
  const Outcome& facts = envelope.facts;
  return envelope.object != nullptr && envelope.sub_resource.empty() && envelope.group == "gpuadmit.io" &&
         (facts.kind == "ClusterGPUPolicy" || facts.kind == "GPUPolicy") &&
         (facts.operation == "CREATE" || facts.operation == "UPDATE");
}

// A policy object the loader refuses: 422 Invalid, as the API server answers an object its schema refuses,
// with every problem.
Outcome invalid_policy(Outcome out, const std::vector<std::string>& problems) {
  Response response;
  response.allowed = false;
  response.status_code = 422;
  response.status_reason = "Invalid";
  std::string message = out.kind + " " + (out.name.empty() ? "<unnamed>" : out.name) +
                        " is not a policy gpuadmit can load (the policy in force is unchanged):";
  for (const std::string& problem : problems) message += "\n  " + problem;
  response.status_message = std::move(message);
  return answer(std::move(out), Verdict::kDenied, response);
}

// Pods and claims on CREATE (a pod's resources and a claim's class are immutable after it); workloads on
// CREATE and UPDATE (their templates change). DELETE, CONNECT and subresources (status, scale) pass.
bool is_judged(const Envelope& envelope, const policy::RuleSet& rules) {
  const Outcome& facts = envelope.facts;
  if (envelope.object == nullptr || !envelope.sub_resource.empty()) return false;
  if (envelope.group.empty() && (facts.kind == "Pod" || facts.kind == "PersistentVolumeClaim"))
    return facts.operation == "CREATE";
  return rules.workload_of(envelope.group, facts.kind) != nullptr &&
         (facts.operation == "CREATE" || facts.operation == "UPDATE");
}

}  // namespace

std::string_view to_string(Verdict verdict) noexcept {
  switch (verdict) {
    case Verdict::kAllowed:
      return "allowed";
    case Verdict::kPatched:
      return "patched";
    case Verdict::kDenied:
      return "denied";
    case Verdict::kError:
      return "error";
    case Verdict::kMalformed:
      return "malformed";
  }
  return "error";
}

std::string_view to_string(Endpoint endpoint) noexcept {
  return endpoint == Endpoint::kMutate ? "mutate" : "validate";
}

Outcome review(std::string_view body, Endpoint endpoint, const policy::PolicySet& policies,
               const policy::ClusterView* cluster, const PolicyObjectCheck& check_policy_object,
               policy::ReviewBudget* budget) {
  // Read into an arena document, which the policy judges as it is (nlohmann::json is built only for the
  // parts a fix edits). `body` outlives the document.
  auto parsed = k8s::parse_json_document(body, kReviewLimits, kNeverRead);
  if (!parsed) return malformed({}, parsed.error().message);
  Envelope envelope;
  if (auto problem = read_envelope(parsed->root(), envelope))
    return malformed(std::move(envelope.facts), *problem);
  if (is_policy_object(envelope)) {
    if (endpoint != Endpoint::kValidate || !check_policy_object) return allowed(std::move(envelope.facts));
    const std::vector<std::string> problems = check_policy_object(k8s::to_json(*envelope.object));
    if (problems.empty()) return allowed(std::move(envelope.facts));
    return invalid_policy(std::move(envelope.facts), problems);
  }
  const policy::RuleSet& rules = policies.for_namespace(envelope.facts.namespace_);
  if (!is_judged(envelope, rules)) return allowed(std::move(envelope.facts));

  const policy::Mode mode = endpoint == Endpoint::kMutate ? policy::Mode::kMutate : policy::Mode::kValidate;
  policy::Request evaluation{*envelope.object, envelope.facts.namespace_, mode, cluster};
  if (envelope.facts.operation == "UPDATE") evaluation.old_object = envelope.old_object;
  evaluation.budget = budget;
  auto decision = policy::evaluate(evaluation, rules);
  if (!decision) return error(std::move(envelope.facts), decision.error().message);
  // Both webhooks deny what gpuadmit cannot fix. The mutating one must: the API server's built-in
  // validation runs between the two webhooks and rejects a fractional GPU or a GPU request that differs
  // from its limit with its own terse message, so /validate would never get to explain them.
  if (!decision->allowed()) return denied(std::move(envelope.facts), *decision);
  const bool probe = is_probe(*envelope.object);
  if (mode == policy::Mode::kMutate) return patched(std::move(envelope.facts), *decision, probe);
  return warned(std::move(envelope.facts), *decision, probe);
}

Outcome review(std::string_view body, Endpoint endpoint, const policy::RuleSet& rules,
               const policy::ClusterView* cluster) {
  return review(body, endpoint, policy::PolicySet::of(rules), cluster, {});
}

}  // namespace gpuadmit::admission
