#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>
#include <vector>

#include "gpuadmit/admission/review.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"
#include "support/reviews.hpp"

using gpuadmit::admission::Endpoint;
using gpuadmit::admission::review;
using gpuadmit::admission::Verdict;
using nlohmann::json;

namespace {

const gpuadmit::policy::RuleSet kRules;

std::string base64_decode(const std::string& in) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned value = 0;
  int bits = -8;
  for (const char c : in) {
    if (c == '=') break;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos) throw std::runtime_error("not standard base64");
    value = (value << 6U) + static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((value >> static_cast<unsigned>(bits)) & 0xFFU);
      bits -= 8;
    }
  }
  return out;
}

json response_of(const gpuadmit::admission::Outcome& outcome) {
  REQUIRE(outcome.http_status == 200);
  return json::parse(outcome.body);
}

}  // namespace

TEST_CASE("the response echoes apiVersion, kind and request.uid", "[review]") {
  const auto outcome =
      review(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/good-gpu-pod.yaml"), "uid-123"),
             Endpoint::kValidate, kRules);
  const json r = response_of(outcome);
  CHECK(r["apiVersion"] == "admission.k8s.io/v1");
  CHECK(r["kind"] == "AdmissionReview");
  CHECK(r["response"]["uid"] == "uid-123");
  CHECK(r["response"]["allowed"] == true);
  CHECK_FALSE(r["response"].contains("patch"));
}

TEST_CASE("mutate returns a base64 JSON Patch that turns the object into the fixed pod", "[review]") {
  // With a cluster view: without one, raise-requests cannot tell that the raised requests fit a node.
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json pod = gpuadmit::test::fixture("pods/vit-b-burstable.yaml");
  const auto outcome = review(gpuadmit::test::admission_review(pod), Endpoint::kMutate, kRules, &view);
  const json r = response_of(outcome);
  CHECK(outcome.verdict == Verdict::kPatched);
  CHECK(r["response"]["allowed"] == true);
  CHECK(r["response"]["patchType"] == "JSONPatch");
  const json patch = json::parse(base64_decode(r["response"]["patch"]));
  REQUIRE(patch.is_array());
  CHECK(outcome.patch_operations == patch.size());
  const json patched = pod.patch(patch);
  CHECK(patched["spec"]["containers"][0]["resources"]["requests"]["memory"] == "8Gi");
  CHECK(patched["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu");
  // What mutate fixed, validate accepts.
  const auto validated =
      review(gpuadmit::test::admission_review(patched), Endpoint::kValidate, kRules, &view);
  CHECK(response_of(validated)["response"]["allowed"] == true);
}

TEST_CASE("mutate with nothing to fix sends no patch field at all", "[review]") {
  const auto outcome =
      review(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/good-gpu-pod.yaml")),
             Endpoint::kMutate, kRules);
  const json r = response_of(outcome);
  CHECK_FALSE(r["response"].contains("patch"));
  CHECK_FALSE(r["response"].contains("patchType"));
  CHECK(outcome.verdict == Verdict::kAllowed);
}

TEST_CASE("validate denies violations with 403 Forbidden and the whole story", "[review]") {
  // Without the mutating webhook's fixes (e.g. it failed open), validate reports what mutate would have fixed
  // too.
  const auto outcome =
      review(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/fractional-gpu.yaml")),
             Endpoint::kValidate, kRules);
  const json r = response_of(outcome);
  CHECK(outcome.verdict == Verdict::kDenied);
  CHECK(r["response"]["allowed"] == false);
  CHECK(r["response"]["status"]["code"] == 403);
  CHECK(r["response"]["status"]["reason"] == "Forbidden");
  CHECK_THAT(
      r["response"]["status"]["message"].get<std::string>(),
      Catch::StartsWith("gpuadmit denied pod \"notebook-half-gpu\": 3 problems to fix\n[gpu-whole-units]"));
  CHECK_THAT(r["response"]["status"]["message"].get<std::string>(),
             Catch::Contains("\n[gpu-tolerations] spec.tolerations"));
  CHECK_THAT(r["response"]["status"]["message"].get<std::string>(),
             Catch::Contains("\n[shm-size] spec.containers[0].volumeMounts"));
  CHECK_FALSE(r["response"].contains("patch"));
}

TEST_CASE("mutate denies what it cannot fix, so the user reads gpuadmit's message, not the API server's",
          "[review]") {
  const auto outcome =
      review(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/fractional-gpu.yaml")),
             Endpoint::kMutate, kRules);
  const json r = response_of(outcome);
  CHECK(r["response"]["allowed"] == false);
  CHECK(r["response"]["status"]["code"] == 403);
  CHECK_FALSE(r["response"].contains("patch"));
  CHECK_THAT(
      r["response"]["status"]["message"].get<std::string>(),
      Catch::StartsWith("gpuadmit denied pod \"notebook-half-gpu\": 1 problem to fix\n[gpu-whole-units]"));
}

TEST_CASE("warn findings travel as warnings on validate", "[review]") {
  const auto outcome =
      review(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/resnet50-no-gpu.yaml")),
             Endpoint::kValidate, kRules);
  const json r = response_of(outcome);
  REQUIRE(r["response"]["warnings"].size() == 1);
  CHECK_THAT(r["response"]["warnings"][0].get<std::string>(), Catch::StartsWith("gpu-intent: "));
  CHECK(outcome.rules_fired == std::vector<std::string>{"gpu-intent"});
}

TEST_CASE("objects gpuadmit does not judge pass untouched", "[review]") {
  auto [operation, kind] = GENERATE(table<const char*, const char*>({
      {"UPDATE", "Pod"},
      {"DELETE", "Pod"},
      {"CREATE", "ConfigMap"},
      {"CONNECT", "Pod"},
  }));
  CAPTURE(operation, kind);
  json object = gpuadmit::test::fixture("pods/fractional-gpu.yaml");
  object["kind"] = kind;  // the API server sends the object of the kind it names
  const auto outcome =
      review(gpuadmit::test::admission_review(object, "u", operation, kind), Endpoint::kValidate, kRules);
  const json r = response_of(outcome);
  CHECK(r["response"]["allowed"] == true);
  CHECK(r["response"]["uid"] == "u");
}

TEST_CASE("a pod gpuadmit cannot read is denied with code 500, never allowed", "[review]") {
  json pod = gpuadmit::test::fixture("pods/good-gpu-pod.yaml");
  pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = "a lot";
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const auto outcome = review(gpuadmit::test::admission_review(pod), endpoint, kRules);
    const json r = response_of(outcome);
    CHECK(outcome.verdict == Verdict::kError);
    CHECK(r["response"]["allowed"] == false);
    CHECK(r["response"]["status"]["code"] == 500);
    CHECK_THAT(
        r["response"]["status"]["message"].get<std::string>(),
        Catch::Contains("gpuadmit could not decide on this Pod: spec.containers[0].resources.limits.memory"));
  }
}

TEST_CASE("bodies that are not an AdmissionReview get HTTP 400 and a one-line reason", "[review]") {
  auto [body, fragment] = GENERATE(table<std::string, std::string>({
      {"", "malformed JSON"},
      {"{", "malformed JSON"},
      {"[]", "not a JSON object"},
      {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}})",
       "admission.k8s.io/v1"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", "missing request"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})",
       "request.uid is missing"},
      {std::string(200, '[') + std::string(200, ']'), "deeper than 128"},
  }));
  const auto outcome = review(body, Endpoint::kValidate, kRules);
  CHECK(outcome.http_status == 400);
  CHECK(outcome.verdict == Verdict::kMalformed);
  CHECK_THAT(outcome.body, Catch::Contains(fragment));
  CHECK(outcome.body.find('\n') == outcome.body.size() - 1);
}

TEST_CASE("envelope members no rule reads are skipped, but still checked as JSON", "[review]") {
  // The request's resource and request* echoes and the user's uid, groups and extras are never built;
  // the username (logged) and request.kind (routing) are.
  json base =
      json::parse(gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/fractional-gpu.yaml")));
  base["request"]["userInfo"] = {{"username", "alice"},
                                 {"uid", "u-1"},
                                 {"groups", {"system:authenticated", "ml-team"}},
                                 {"extra", {{"scopes", {"a", "b"}}}}};
  base["request"]["requestKind"] = {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}};
  const auto read = review(base.dump(), Endpoint::kValidate, kRules);
  CHECK(read.user == "alice");
  CHECK(read.kind == "Pod");
  CHECK(read.verdict == Verdict::kDenied);

  const std::string body = base.dump();
  for (const std::string& member :
       {std::string(R"("groups":[)"), std::string(R"("requestKind":{)"), std::string(R"("extra":{)")}) {
    const auto at = body.find(member);
    REQUIRE(at != std::string::npos);
    std::string broken = body;
    broken.insert(at + member.size(), "tru,");  // an invalid literal inside the skipped member
    const auto outcome = review(broken, Endpoint::kValidate, kRules);
    INFO(member);
    CHECK(outcome.http_status == 400);
    CHECK_THAT(outcome.body, Catch::Contains("malformed JSON"));
  }
}

TEST_CASE("responses are printed exactly as nlohmann would print them", "[review]") {
  // The response is written as text, not dumped from a DOM: every shape (allowed, denied with status,
  // warnings, audit annotations, a patch, could-not-decide) must read back as the same JSON and print the
  // same.
  gpuadmit::policy::RuleSet audit_rules;
  audit_rules.guaranteed_qos.action = gpuadmit::policy::Action::kAudit;
  audit_rules.memory_floor.action = gpuadmit::policy::Action::kWarn;
  const gpuadmit::policy::RuleSet* rule_sets[] = {&kRules, &audit_rules};
  std::size_t shapes = 0;
  for (const std::string name : {"good-gpu-pod", "fractional-gpu", "vit-b-burstable", "gpu-pod-with-sidecar",
                                 "gpu-request-without-limit", "cpu-pod-with-gpu-toleration"}) {
    for (const auto* rules : rule_sets) {
      for (const Endpoint endpoint : {Endpoint::kValidate, Endpoint::kMutate}) {
        const auto outcome = review(
            gpuadmit::test::admission_review(gpuadmit::test::fixture("pods/" + name + ".yaml"), "uid-\"q\""),
            endpoint, *rules);
        INFO(name << " " << to_string(endpoint) << ": " << outcome.body);
        REQUIRE(outcome.http_status == 200);
        json parsed = json::parse(outcome.body);
        CHECK(parsed["response"]["uid"] == "uid-\"q\"");
        CHECK(outcome.body == parsed.dump());  // the patch too prints in its sorted place
        shapes |= (parsed["response"].contains("status") ? 1U : 0U) |
                  (parsed["response"].contains("warnings") ? 2U : 0U) |
                  (parsed["response"].contains("auditAnnotations") ? 4U : 0U) |
                  (outcome.verdict == Verdict::kPatched ? 8U : 0U);
      }
    }
  }
  CHECK(shapes == 15U);  // every optional member was printed at least once

  const auto error = review(gpuadmit::test::admission_review(json{{"kind", "Pod"}, {"spec", 1}}),
                            Endpoint::kValidate, kRules);
  REQUIRE(error.verdict == Verdict::kError);
  CHECK(error.body == json::parse(error.body).dump());
}

TEST_CASE("generateName pods are named by their prefix in logs and messages", "[review]") {
  json pod = gpuadmit::test::fixture("pods/fractional-gpu.yaml");
  pod["metadata"].erase("name");
  pod["metadata"]["generateName"] = "train-";
  const auto outcome = review(gpuadmit::test::admission_review(pod), Endpoint::kValidate, kRules);
  CHECK(outcome.name == "train-*");
  CHECK_THAT(response_of(outcome)["response"]["status"]["message"].get<std::string>(),
             Catch::Contains("pod \"train-*\""));
}

namespace {

// An AdmissionReview for a workload: request.kind carries the API group, as the API server sends it.
std::string workload_review(const json& object, const std::string& group, const std::string& kind,
                            const std::string& operation = "CREATE", const json& old_object = nullptr) {
  json review = json::parse(gpuadmit::test::admission_review(object, "uid-w", operation, kind));
  review["request"]["kind"]["group"] = group;
  review["request"]["oldObject"] = old_object;
  return review.dump();
}

}  // namespace

TEST_CASE("workloads are judged on CREATE and UPDATE through their templates", "[review][workloads]") {
  const json deployment = gpuadmit::test::fixture("workloads/deployment.yaml");
  const auto created = review(workload_review(deployment, "apps", "Deployment"), Endpoint::kMutate, kRules);
  CHECK(created.verdict == Verdict::kPatched);
  const json patch = json::parse(base64_decode(response_of(created)["response"]["patch"]));
  CHECK(std::any_of(patch.begin(), patch.end(), [](const json& op) {
    return op["path"].get<std::string>().rfind("/spec/template/spec/", 0) == 0;
  }));

  // Scaling or relabelling leaves the (unchanged, never fixed) template alone.
  json scaled = deployment;
  scaled["spec"]["replicas"] = 7;
  const auto update =
      review(workload_review(scaled, "apps", "Deployment", "UPDATE", deployment), Endpoint::kMutate, kRules);
  CHECK(update.verdict == Verdict::kAllowed);
  CHECK_FALSE(response_of(update)["response"].contains("patch"));

  // A fractional GPU in a Job's template is denied at apply time, naming the template field.
  json job = gpuadmit::test::fixture("workloads/job.yaml");
  job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "0.5";
  const auto denied = review(workload_review(job, "batch", "Job"), Endpoint::kMutate, kRules);
  CHECK(denied.verdict == Verdict::kDenied);
  CHECK_THAT(response_of(denied)["response"]["status"]["message"].get<std::string>(),
             Catch::StartsWith("gpuadmit denied job \"finetune\"") &&
                 Catch::Contains("spec.template.spec.containers[0].resources.limits"));

  // Same kind name in another group, DELETE, and kinds outside the policy pass untouched.
  for (const auto& [group, kind, operation] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"example.com", "Deployment", "CREATE"},
                                                                      {"apps", "Deployment", "DELETE"},
                                                                      {"", "Service", "CREATE"}}) {
    CAPTURE(group, kind, operation);
    json object = deployment;
    object["kind"] = kind;  // the API server sends the object of the kind and group it names
    object["apiVersion"] = group.empty() ? "v1" : group + "/v1";
    const auto passed = review(workload_review(object, group, kind, operation), Endpoint::kMutate, kRules);
    CHECK(passed.verdict == Verdict::kAllowed);
    CHECK_FALSE(response_of(passed)["response"].contains("patch"));
  }
}

TEST_CASE("a denial carries the review's warnings too, so one apply shows every problem", "[review]") {
  // 16 GPUs on a cluster of 8-GPU nodes (node-fit denies) and a claim whose storage class does not exist
  // (checkpoint-pvc warns): kubectl prints the warning above the denial. The message names it as well: a
  // ReplicaSet's FailedCreate event holds the message and no warnings, and the pod would wait on the claim
  // once the denial is fixed.
  const auto view = gpuadmit::test::view_of("scoped-quotas");
  const json pod = gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: '8', memory: 64Gi, nvidia.com/gpu: 16}}
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: data-zonal}}
)");
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    const json r = response_of(review(gpuadmit::test::admission_review(pod), endpoint, kRules, &view));
    CHECK(r["response"]["allowed"] == false);
    CHECK_THAT(r["response"]["status"]["message"].get<std::string>(), Catch::Contains("[node-fit]"));
    REQUIRE(r["response"].contains("warnings"));
    CHECK_THAT(r["response"]["warnings"].dump(),
               Catch::Contains("checkpoint-pvc: claim \\\"data-zonal\\\" cannot bind"));
    CHECK_THAT(r["response"]["status"]["message"].get<std::string>(),
               Catch::Contains("\nAlso, once admitted (warnings):\n") &&
                   Catch::Contains("\n  checkpoint-pvc: claim \"data-zonal\" cannot bind"));
  }
}

TEST_CASE("a mutating denial lists the fixes gpuadmit makes once the problems are fixed", "[review]") {
  // Denied for 16 GPUs no node has; the /dev/shm volume is still a fix gpuadmit makes on the next apply.
  const auto view = gpuadmit::test::view_of("scoped-quotas");
  const json pod = gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: big, namespace: ml-team}
spec:
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: '8', memory: 64Gi, nvidia.com/gpu: 16}}
)");
  const json r = response_of(review(gpuadmit::test::admission_review(pod), Endpoint::kMutate, kRules, &view));
  const std::string message = r["response"]["status"]["message"].get<std::string>();
  CHECK_THAT(message,
             Catch::Contains("\nOnce these are fixed, gpuadmit also makes these changes when it admits "
                             "the pod:\n  [shm-size] added a memory-backed volume \"dshm\""));
  CHECK_FALSE(r["response"].contains("patch"));
}

TEST_CASE(
    "a probe annotation gets a warning from validate whatever the policy, so helm test sees gpuadmit answer",
    "[review][probe]") {
  // endpoint, annotated, policy action for every rule, whether the probe warning is expected
  auto [endpoint, annotated, action, expected] =
      GENERATE(table<Endpoint, bool, gpuadmit::policy::Action, bool>({
          {Endpoint::kValidate, true, gpuadmit::policy::Action::kEnforce, true},
          {Endpoint::kValidate, true, gpuadmit::policy::Action::kWarn, true},
          {Endpoint::kValidate, true, gpuadmit::policy::Action::kOff, true},
          {Endpoint::kValidate, false, gpuadmit::policy::Action::kEnforce, false},
          {Endpoint::kMutate, true, gpuadmit::policy::Action::kEnforce, false},
      }));
  CAPTURE(annotated, static_cast<int>(action));
  gpuadmit::policy::RuleSet rules;
  rules.gpu_intent.action = action;
  rules.stray_gpu_toleration.action = action;
  json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "gpuadmit-probe", "namespace": "default"},
      "spec": {"containers": [{"name": "probe", "image": "registry.invalid/gpuadmit-probe:0"}]}})");
  if (annotated) pod["metadata"]["annotations"] = {{"gpuadmit.io/probe", "helm-test"}};
  const json r = response_of(review(gpuadmit::test::admission_review(pod), endpoint, rules));
  CHECK(r["response"]["allowed"] == true);
  const json warnings = r["response"].value("warnings", json::array());
  const bool probed = std::any_of(warnings.begin(), warnings.end(), [](const json& w) {
    return w.get<std::string>().starts_with("gpuadmit.io/probe: ");
  });
  CHECK(probed == expected);
}

TEST_CASE(
    "a probe annotation gets gpuadmit's reply annotation from mutate, so a shell-free helm test sees it",
    "[review][probe]") {
  // endpoint, annotated, the pod requests a GPU (so the policy's own fixes are in the patch too), whether
  // the reply is expected
  auto [endpoint, annotated, gpu, expected] = GENERATE(table<Endpoint, bool, bool, bool>({
      {Endpoint::kMutate, true, false, true},
      {Endpoint::kMutate, true, true, true},
      {Endpoint::kMutate, false, false, false},
      {Endpoint::kMutate, false, true, false},
      {Endpoint::kValidate, true, false, false},
  }));
  CAPTURE(static_cast<int>(endpoint), annotated, gpu);
  json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "gpuadmit-probe", "namespace": "default"},
      "spec": {"containers": [{"name": "probe", "image": "registry.invalid/gpuadmit-probe:0"}]}})");
  if (annotated) pod["metadata"]["annotations"] = {{"gpuadmit.io/probe", "helm-test"}};
  if (gpu) pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  const json r = response_of(review(gpuadmit::test::admission_review(pod), endpoint, kRules));
  REQUIRE(r["response"]["allowed"] == true);
  const json patch = r["response"].contains("patch")
                         ? json::parse(base64_decode(r["response"]["patch"].get<std::string>()))
                         : json::array();
  const json patched = patch.empty() ? pod : pod.patch(patch);
  const json reply =
      patched["metadata"].value("annotations", json::object()).value("gpuadmit.io/probe-reply", json());
  CHECK(reply.is_string() == expected);
  if (expected) CHECK(reply == "mutated by gpuadmit");
  // The policy's own fixes are still made beside the reply.
  if (gpu) CHECK(patched["spec"]["tolerations"].is_array());
}

TEST_CASE("a pod is judged by its namespace's policy where a GPUPolicy set one, else by the cluster's",
          "[review][policy-set]") {
  gpuadmit::policy::RuleSet lenient;  // not a tightening: PolicySet only picks, the loader checks
  lenient.gpu_whole_units.action = gpuadmit::policy::Action::kOff;
  gpuadmit::policy::PolicySet set = gpuadmit::policy::PolicySet::of(kRules);
  set.namespaces["team-a"] = std::make_shared<const gpuadmit::policy::RuleSet>(lenient);
  auto [ns, verdict] = GENERATE(table<const char*, Verdict>({
      {"team-a", Verdict::kPatched},
      {"team-b", Verdict::kDenied},
  }));
  CAPTURE(ns);
  json pod = gpuadmit::test::fixture("pods/fractional-gpu.yaml");
  pod["metadata"]["namespace"] = ns;
  const auto outcome = review(gpuadmit::test::admission_review(pod), Endpoint::kMutate, set, nullptr, {});
  INFO(outcome.body);
  CHECK(outcome.verdict == verdict);
}

namespace {

std::string policy_review(const json& object, const std::string& operation = "CREATE") {
  json body = json::parse(gpuadmit::test::admission_review(object, "p-1", operation, object["kind"]));
  body["request"]["kind"]["group"] = "gpuadmit.io";
  body["request"]["kind"]["version"] = "v1alpha1";
  if (!object["metadata"].contains("namespace")) body["request"].erase("namespace");
  return body.dump();
}

// A stand-in for config::load_policy_object: admission only carries its answer.
std::vector<std::string> refuse_perGPU(const json& object) {
  if (object["spec"]["rules"]["memory-floor"].contains("perGPU"))
    return {object["kind"].get<std::string>() + "/p: spec.rules.memory-floor: unknown key \"perGPU\""};
  return {};
}

}  // namespace

TEST_CASE("a policy object is judged on /validate by the check it is given", "[review][policy-object]") {
  const gpuadmit::policy::PolicySet set = gpuadmit::policy::PolicySet::of(kRules);
  auto [name, kind, operation, rules, allowed] =
      GENERATE(table<const char*, const char*, const char*, const char*, bool>({
          {"a valid ClusterGPUPolicy passes", "ClusterGPUPolicy", "CREATE",
           R"({"memory-floor": {"perGpu": 1}})", true},
          {"an invalid ClusterGPUPolicy is refused", "ClusterGPUPolicy", "CREATE",
           R"({"memory-floor": {"perGPU": 1}})", false},
          {"an invalid GPUPolicy update is refused", "GPUPolicy", "UPDATE",
           R"({"memory-floor": {"perGPU": 1}})", false},
          {"a delete passes", "GPUPolicy", "DELETE", R"({"memory-floor": {"perGPU": 1}})", true},
      }));
  INFO(name);
  json object = {{"apiVersion", "gpuadmit.io/v1alpha1"},
                 {"kind", kind},
                 {"metadata", {{"name", "p"}}},
                 {"spec", {{"rules", json::parse(rules)}}}};
  if (std::string(kind) == "GPUPolicy") object["metadata"]["namespace"] = "team-a";
  const auto outcome =
      review(policy_review(object, operation), Endpoint::kValidate, set, nullptr, refuse_perGPU);
  const json r = response_of(outcome);
  CHECK(r["response"]["allowed"] == allowed);
  if (!allowed) {
    CHECK(outcome.verdict == Verdict::kDenied);
    CHECK(r["response"]["status"]["code"] == 422);
    CHECK(r["response"]["status"]["reason"] == "Invalid");
    const std::string message = r["response"]["status"]["message"];
    CHECK_THAT(message, Catch::Contains("spec.rules.memory-floor: unknown key \"perGPU\""));
    CHECK_THAT(message, Catch::Contains("the policy in force is unchanged"));
  }
}

TEST_CASE("without a policy object check, policy objects pass (serve without --policy-objects)",
          "[review][policy-object]") {
  const json object = {{"apiVersion", "gpuadmit.io/v1alpha1"},
                       {"kind", "ClusterGPUPolicy"},
                       {"metadata", {{"name", "p"}}},
                       {"spec", {{"rules", {{"memory-floor", {{"perGPU", 1}}}}}}}};
  const auto outcome = review(policy_review(object), Endpoint::kValidate, kRules);
  CHECK(response_of(outcome)["response"]["allowed"] == true);
}
