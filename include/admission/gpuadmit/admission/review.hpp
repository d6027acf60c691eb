// AdmissionReview v1 ⇄ policy core. Pure and transport-free: the server hands it a request body and
// gets back the HTTP status and body to send, plus the facts its logs and metrics need.
//
// Contract (see ../shared/reference/admission-protocol.md §1):
//  - a well-formed review always gets HTTP 200 and an AdmissionReview echoing apiVersion, kind and uid;
//  - /mutate returns the fixes as a base64 JSON Patch (no patch field when nothing changed) and the notices
//    as warnings; what it cannot fix it denies (403): the API server's own validation runs before the
//    validating webhooks and would otherwise answer a fractional GPU with its terse "must be an integer";
//  - /validate judges the final object: violations are denied with code 403, reason Forbidden; warn rules
//    become warnings; it never returns a patch;
//  - when evaluation fails the answer is a denial with code 500 saying gpuadmit could not decide — never an
//    allow;
//  - a body that is not an AdmissionReview gets HTTP 400 and a one-line reason.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include "gpuadmit/policy/cluster_snapshot.hpp"

#include "gpuadmit/policy/decision.hpp"
#include "gpuadmit/policy/policy_set.hpp"
#include "gpuadmit/policy/review_budget.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::admission {

enum class Endpoint : std::uint8_t { kMutate, kValidate };

enum class Verdict : std::uint8_t {
  kAllowed,    // allowed, nothing changed
  kPatched,    // allowed with a patch (mutate)
  kDenied,     // policy verdict: 403
  kError,      // could not decide: denied with code 500
  kMalformed,  // not an AdmissionReview: HTTP 400
};

std::string_view to_string(Verdict verdict) noexcept;
std::string_view to_string(Endpoint endpoint) noexcept;

struct Outcome {
  int http_status = 200;
  std::string body;  // AdmissionReview JSON (200) or a one-line reason (400)
  Verdict verdict = Verdict::kAllowed;

  // For the review's log line and metrics.
  std::string uid;
  std::string kind;
  std::string namespace_;
  std::string name;  // name, or generateName followed by '*'
  std::string operation;
  std::string user;
  std::vector<std::string> rules_fired;
  std::size_t patch_operations = 0;
  std::size_t warnings = 0;
  std::vector<policy::Finding> audits;
  std::string error;  // why it could not decide (kError, kMalformed)
};

// The problems of a policy object (a ClusterGPUPolicy or GPUPolicy on CREATE or UPDATE), none when it is
// valid. The server gives config::load_policy_object's errors: reading a policy is the config layer's.
using PolicyObjectCheck = std::function<std::vector<std::string>(const nlohmann::json& object)>;

// Handles one AdmissionReview request body for the given endpoint with the policy of the object's namespace
// and, when gpuadmit has one, the cluster view (without it the cluster-aware rules are skipped). Policy
// objects go to `check_policy_object` on /validate, and are refused (422 Invalid) with its problems; without
// a check they pass.
// `budget`: what the review may spend on device selectors, with the server's deadline (none: the default
// budget without a deadline).
Outcome review(std::string_view body, Endpoint endpoint, const policy::PolicySet& policies,
               const policy::ClusterView* cluster, const PolicyObjectCheck& check_policy_object,
               policy::ReviewBudget* budget = nullptr);

// One policy for every namespace, no policy objects judged.
Outcome review(std::string_view body, Endpoint endpoint, const policy::RuleSet& rules,
               const policy::ClusterView* cluster = nullptr);

}  // namespace gpuadmit::admission
