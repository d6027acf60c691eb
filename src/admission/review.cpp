#include "gpuadmit/admission/review.hpp"

#include <cctype>

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

Outcome malformed(Outcome out, std::string reason) {
  out.http_status = 400;
  out.verdict = Verdict::kMalformed;
  out.error = policy::one_line(reason, 300);
  out.body = "malformed AdmissionReview: " + out.error + "\n";
  return out;
}

// The response object, printed directly: building it as a DOM first and dumping it was a twentieth of a
// /validate review. Members print in nlohmann's (sorted) order, so the text is what dump() would give.
struct Response {
  bool allowed = true;
  std::string audit_findings;  // auditAnnotations.findings (the API server prefixes the webhook's name)
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

std::vector<std::string> warning_summaries(const policy::Decision& decision) {
  std::vector<std::string> out;
  out.reserve(decision.warnings.size());
  for (const policy::Finding& f : decision.warnings) out.push_back(f.summary);
  return out;
}

void set_warnings(Response& response, const std::vector<std::string>& candidates, Outcome& out) {
  response.warnings = warning_lines(candidates);
  out.warnings = response.warnings.size();
}

// Audit findings travel in auditAnnotations (the API server prefixes the key with the webhook name).
void set_audit_annotations(Response& response, const policy::Decision& decision) {
  if (decision.audits.empty()) return;
  std::string text;
  for (const policy::Finding& f : decision.audits) text += (text.empty() ? "" : "; ") + f.summary;
  response.audit_findings = policy::one_line(text, 1000);
}

// "pod", "claim", "deployment", "pytorchjob": how a denial names the object (kubectl's own lower-case kinds).
std::string noun(std::string_view kind) {
  if (kind == "PersistentVolumeClaim") return "claim";
  std::string out(kind);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Adds patchType and patch to the dumped response object (the body ends with the two closing braces of
// `response` and of the review). Encoding the patch straight into the body avoids running the base64 text
// through the JSON escaper, which would look at every byte of it for nothing: base64 needs no escaping.
void splice_patch(std::string& body, std::string_view patch_json) {
  body.resize(body.size() - 2);
  body += R"(,"patchType":"JSONPatch","patch":")";
  append_base64(body, patch_json);
  body += "\"}}";
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

Outcome review(std::string_view body, Endpoint endpoint, const policy::RuleSet& rules,
               const policy::ClusterView* cluster) {
  Outcome out;
  // Read into an arena document: a pod is judged from it as it is; nlohmann::json is built only for what
  // a fix edits or a workload's templates (see policy::ObjectRef). `body` outlives the document.
  auto parsed = k8s::parse_json_document(body, kReviewLimits, kNeverRead);
  if (!parsed) return malformed(std::move(out), parsed.error().message);
  const k8s::JsonValue& review = parsed->root();
  if (!review.is_object()) return malformed(std::move(out), "the body is not a JSON object");
  if (k8s::string_member(review, "apiVersion") != "admission.k8s.io/v1" ||
      k8s::string_member(review, "kind") != "AdmissionReview") {
    return malformed(std::move(out),
                     "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview "
                     "(register the webhook with admissionReviewVersions: [v1])");
  }
  const k8s::JsonValue* request_it = object_member(review, "request");
  if (request_it == nullptr) return malformed(std::move(out), "missing request");
  const k8s::JsonValue& request = *request_it;
  out.uid = string_or_empty(request, "uid");
  if (out.uid.empty()) return malformed(std::move(out), "request.uid is missing");
  out.operation = string_or_empty(request, "operation");
  out.namespace_ = string_or_empty(request, "namespace");
  out.name = string_or_empty(request, "name");
  const k8s::JsonValue* kind = object_member(request, "kind");
  if (kind != nullptr) out.kind = string_or_empty(*kind, "kind");
  if (const k8s::JsonValue* user = object_member(request, "userInfo")) {
    out.user = string_or_empty(*user, "username");
  }

  Response response;
  const k8s::JsonValue* object_it = object_member(request, "object");
  // The policy dispatches on the object's own kind; one that disagrees with request.kind is no review the
  // API server sends, and judging by either kind could pass the other unjudged.
  if (const std::string_view object_kind =
          object_it != nullptr ? k8s::string_member(*object_it, "kind") : std::string_view();
      !object_kind.empty() && object_kind != out.kind) {
    return malformed(std::move(out), "request.kind is " + out.kind + " but request.object.kind is " +
                                         std::string(object_kind));
  }
  const std::string_view group = kind != nullptr ? k8s::string_member(*kind, "group") : std::string_view();
  const bool workload = rules.workload_of(group, out.kind) != nullptr;
  const bool core_kind = group.empty() && (out.kind == "Pod" || out.kind == "PersistentVolumeClaim");
  // Pods and claims on CREATE (a pod's resources and a claim's class are immutable after it); workloads on
  // CREATE and UPDATE (their templates change). DELETE, CONNECT and subresources (status, scale) pass.
  const bool judged = (core_kind ? out.operation == "CREATE"
                                 : workload && (out.operation == "CREATE" || out.operation == "UPDATE")) &&
                      k8s::string_member(request, "subResource").empty() && object_it != nullptr;
  if (!judged) {
    out.body = response_text(out.uid, response);
    return out;
  }
  const k8s::JsonValue& object = *object_it;
  if (out.name.empty()) {
    if (const k8s::JsonValue* meta = object_member(object, "metadata")) {
      const std::string_view generate_name = k8s::string_member(*meta, "generateName");
      if (!generate_name.empty()) {
        out.name = std::string(generate_name) + "*";
      }
    }
  }

  const policy::Mode mode = endpoint == Endpoint::kMutate ? policy::Mode::kMutate : policy::Mode::kValidate;
  policy::Request evaluation{policy::ObjectRef(object), out.namespace_, mode, cluster};
  evaluation.patch_form = policy::PatchForm::kText;
  evaluation.texts = policy::Texts::kSent;
  json old_object;
  if (const k8s::JsonValue* old = object_member(request, "oldObject"); out.operation == "UPDATE" && old) {
    old_object = k8s::to_json(*old);  // workloads only: their templates are compared as nlohmann::json
    evaluation.old_object = &old_object;
  }
  auto decision = policy::evaluate(evaluation, rules);
  if (decision && !decision->allowed()) {
    // A denial shows everything (its warnings and the fixes it would have made), so the texts kSent leaves
    // out in Mutate mode are needed: evaluate once more with all of them. Denials are rare; allows stay lean.
    evaluation.texts = policy::Texts::kAll;
    if (auto full = policy::evaluate(evaluation, rules)) decision = std::move(full);
  }
  if (!decision) {
    // Could not decide: deny with 500 so failurePolicy is not what decides, and say so plainly.
    out.verdict = Verdict::kError;
    out.error = decision.error().message;
    response.allowed = false;
    response.status_code = 500;
    response.status_reason = "InternalError";
    response.status_message = "gpuadmit could not decide on this " + out.kind + ": " + out.error;
    out.body = response_text(out.uid, response);
    return out;
  }
  out.rules_fired = decision->rules_fired();
  out.audits = decision->audits;
  set_audit_annotations(response, *decision);

  // Both webhooks deny what gpuadmit cannot fix. The mutating one must: the API server's built-in
  // validation runs between the two webhooks and rejects a fractional GPU or a GPU request that differs
  // from its limit with its own terse message, so /validate would never get to explain them.
  if (!decision->allowed()) {
    out.verdict = Verdict::kDenied;
    response.allowed = false;
    response.status_code = 403;
    response.status_reason = "Forbidden";
    response.status_message =
        denial_message(*decision, noun(out.kind), out.name.empty() ? "<unnamed>" : out.name);
    // The warnings too: kubectl prints them above the denial, so one apply shows every problem (a claim
    // that cannot bind as well as the GPUs no node has), not one per attempt.
    set_warnings(response, warning_summaries(*decision), out);
    out.body = response_text(out.uid, response);
    return out;
  }

  if (mode == policy::Mode::kMutate) {
    out.patch_operations = decision->patch_operations;
    set_warnings(response, decision->notices, out);
    out.body = response_text(out.uid, response);
    if (!decision->patch_text.empty()) {
      out.verdict = Verdict::kPatched;
      splice_patch(out.body, decision->patch_text);
    }
    return out;
  }

  set_warnings(response, warning_summaries(*decision), out);
  out.body = response_text(out.uid, response);
  return out;
}

}  // namespace gpuadmit::admission
