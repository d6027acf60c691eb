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

// The objects of tests/fixtures/audit/objects.yaml, audited against the gpu-cluster fixture by the Auditor
// the CLI and serve use: controllers and claims held first, then the pods.
Audit audit_fixture() {
  const auto view = gpuadmit::test::view_of("gpu-cluster");
  const json objects = gpuadmit::test::fixture("audit/objects.yaml");
  static const gpuadmit::policy::RuleSet rules;  // PolicySet::of refers to it
  const auto policies = gpuadmit::policy::PolicySet::of(rules);
  std::vector<json> held;
  std::vector<json> pods;
  for (const json& o : objects["items"]) (o["kind"] == "Pod" ? pods : held).push_back(o);
  gpuadmit::admission::Auditor auditor(policies, &view);
  REQUIRE(auditor.audit_held(held).ok());
  for (const json& pod : pods) REQUIRE(auditor.audit_pod(pod).ok());
  return auditor.audit();
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

TEST_CASE("an audit keeps per-namespace totals and names each object it lists", "[audit]") {
  const Audit audit = audit_fixture();
  REQUIRE(audit.totals.size() == 1);
  CHECK(audit.totals.at("ml-team").audited == 3);
  CHECK(audit.totals.at("ml-team").with_findings == 2);
  const auto& row = audit.rows.at({"ml-team", "guaranteed-qos", AuditVerdict::kFixed});
  REQUIRE(row.refs.size() == 2);
  CHECK(row.refs[0].api_version == "apps/v1");
  CHECK(row.refs[0].kind == "Deployment");
  CHECK(row.refs[0].name == "trainer");
  CHECK(row.refs[0].uid == "11111111-0000-0000-0000-000000000001");
  CHECK(row.refs[1].kind == "Pod");
  CHECK(row.refs[1].name == "half-gpu");
}

TEST_CASE("an auditor given a namespace judges only that namespace's objects", "[audit]") {
  const gpuadmit::policy::RuleSet rules;
  const auto policies = gpuadmit::policy::PolicySet::of(rules);
  json other = gpuadmit::test::gpu_pod("0.5");
  other["metadata"]["namespace"] = "other";
  json mine = gpuadmit::test::gpu_pod("0.5");
  mine["metadata"]["namespace"] = "mine";
  gpuadmit::admission::Auditor auditor(policies, nullptr, "mine");
  REQUIRE(auditor.audit_pod(other).ok());
  REQUIRE(auditor.audit_pod(mine).ok());
  CHECK(auditor.audit().audited == 1);
  CHECK(auditor.audit().namespaces == std::set<std::string>{"mine"});
}
