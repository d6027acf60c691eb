// gpuadmit audit's core: objects that already exist judged as admission would judge them now, counted per
// namespace, rule and verdict; a pod of an audited controller is left to it; an object counts once per row.
#include <catch2/catch.hpp>

#include "gpuadmit/admission/audit.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::admission::Audit;
using gpuadmit::admission::AuditVerdict;
using nlohmann::json;

// The objects of tests/fixtures/audit/objects.yaml, audited against the gpu-cluster fixture, controllers
// first (as the CLI does).
Audit audit_fixture() {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json objects = gpuadmit::test::fixture("audit/objects.yaml");
  static const gpuadmit::policy::RuleSet rules;  // PolicySet::of refers to it
  const auto policies = gpuadmit::policy::PolicySet::of(rules);
  std::set<std::string> uids;
  for (const json& o : objects["items"]) {
    if (o["metadata"].contains("uid")) uids.insert(o["metadata"]["uid"].get<std::string>());
  }
  Audit audit;
  for (const json& o : objects["items"]) {
    const std::string owner = gpuadmit::admission::controller_uid(o);
    if (o["kind"] != "Pod" && !owner.empty() && uids.contains(owner)) {
      ++audit.left_to_controllers;
      continue;
    }
    REQUIRE(gpuadmit::admission::audit_object(o, policies, &view, uids, audit).ok());
  }
  return audit;
}

}  // namespace

TEST_CASE("an audit counts each object once per namespace, rule and verdict", "[audit]") {
  const Audit audit = audit_fixture();
  const auto [rule, verdict, objects] = GENERATE(table<std::string, AuditVerdict, std::vector<std::string>>({
      {"gpu-whole-units", AuditVerdict::kDenied, {"pod/half-gpu"}},
      // Two containers' worth of fixes, one object each.
      {"guaranteed-qos", AuditVerdict::kFixed, {"deployment/trainer", "pod/half-gpu"}},
      {"gpu-tolerations", AuditVerdict::kFixed, {"deployment/trainer", "pod/half-gpu"}},
      {"cuda-driver", AuditVerdict::kWarned, {"pod/half-gpu"}},
  }));
  CAPTURE(rule);
  const auto row = audit.rows.find({"ml-team", rule, verdict});
  REQUIRE(row != audit.rows.end());
  CHECK(row->second.objects == objects);
  CHECK(row->second.count == objects.size());
}

TEST_CASE("an audit leaves a controller's pods to it and skips what the policy does not judge", "[audit]") {
  const Audit audit = audit_fixture();
  // The ReplicaSet and its pod are the Deployment's; the kube-system pod is excluded; the ConfigMap is
  // not judged at all. Audited: the Deployment, half-gpu, web.
  CHECK(audit.left_to_controllers == 2);
  CHECK(audit.not_checked == 2);
  CHECK(audit.audited == 3);
  CHECK(audit.denied == 1);
  CHECK(audit.with_findings == 2);
  for (const auto& [key, row] : audit.rows) {
    for (const std::string& o : row.objects) CHECK(o != "pod/web");
  }
  const json report = gpuadmit::admission::to_json(audit);
  CHECK(report["summary"]["denied"] == 1);
  CHECK(report["rows"][0]["verdict"].is_string());
}

TEST_CASE("a pod whose controller is not audited is judged itself", "[audit]") {
  const gpuadmit::policy::RuleSet rules;
  const auto policies = gpuadmit::policy::PolicySet::of(rules);
  json pod = gpuadmit::test::gpu_pod("0.5");
  pod["metadata"]["ownerReferences"] =
      json::array({{{"kind", "ReplicaSet"}, {"name", "x"}, {"uid", "not-listed"}, {"controller", true}}});
  Audit audit;
  REQUIRE(gpuadmit::admission::audit_object(pod, policies, nullptr, {}, audit).ok());
  CHECK(audit.audited == 1);
  CHECK(audit.denied == 1);
  REQUIRE_FALSE(gpuadmit::admission::audit_object(json::array(), policies, nullptr, {}, audit).ok());
}
