// PolicyReports from an audit: one per namespace, one result per rule and verdict with the objects it names,
// the summary counting objects that passed, and every size bounded.
#include <catch2/catch.hpp>

#include "gpuadmit/admission/policy_report.hpp"

namespace {

using gpuadmit::admission::Audit;
using gpuadmit::admission::AuditRow;
using gpuadmit::admission::AuditVerdict;
using gpuadmit::admission::ObjectRef;
using gpuadmit::admission::policy_report;
using nlohmann::json;

Audit two_namespaces() {
  Audit audit;
  audit.totals["ml-team"] = {5, 2};
  audit.totals["quiet"] = {4, 0};
  AuditRow denied;
  denied.count = 1;
  denied.objects = {"pod/half-gpu"};
  denied.refs = {ObjectRef{"v1", "Pod", "half-gpu", "u-1"}};
  denied.example = "gpu-whole-units: nvidia.com/gpu must be a whole number";
  audit.rows[{"ml-team", "gpu-whole-units", AuditVerdict::kDenied}] = denied;
  AuditRow warned;
  warned.count = 2;
  warned.objects = {"pod/a", "deployment/b"};
  warned.refs = {ObjectRef{"v1", "Pod", "a", ""}, ObjectRef{"apps/v1", "Deployment", "b", "u-2"}};
  warned.example = "cuda-driver: the image wants CUDA 12.4";
  audit.rows[{"ml-team", "cuda-driver", AuditVerdict::kWarned}] = warned;
  return audit;
}

}  // namespace

TEST_CASE("every namespace with audited objects gets a report, even one where all passed",
          "[policy-report]") {
  CHECK(gpuadmit::admission::report_namespaces(two_namespaces()) ==
        std::vector<std::string>{"ml-team", "quiet"});
  const json quiet = policy_report(two_namespaces(), "quiet", 1700000000);
  CHECK(quiet["results"].empty());
  CHECK(quiet["summary"] == json{{"pass", 4}, {"fail", 0}, {"warn", 0}, {"error", 0}, {"skip", 0}});
}

TEST_CASE("a report is a wgpolicyk8s.io/v1alpha2 PolicyReport named gpuadmit, labelled as gpuadmit's",
          "[policy-report]") {
  const json report = policy_report(two_namespaces(), "ml-team", 1700000000);
  CHECK(report["apiVersion"] == "wgpolicyk8s.io/v1alpha2");
  CHECK(report["kind"] == "PolicyReport");
  CHECK(report["metadata"]["name"] == "gpuadmit");
  CHECK(report["metadata"]["namespace"] == "ml-team");
  CHECK(report["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuadmit");
  CHECK(report["summary"] == json{{"pass", 3}, {"fail", 1}, {"warn", 2}, {"error", 0}, {"skip", 0}});
}

TEST_CASE("a result per rule and verdict: what admission would do, how severe, and the objects",
          "[policy-report]") {
  const json results = policy_report(two_namespaces(), "ml-team", 1700000000)["results"];
  REQUIRE(results.size() == 2);
  // Rows are ordered by rule: cuda-driver, then gpu-whole-units.
  const auto [index, rule, result, severity, action, resources] =
      GENERATE(table<std::size_t, std::string, std::string, std::string, std::string, std::size_t>({
          {0, "cuda-driver", "warn", "low", "warn", 2},
          {1, "gpu-whole-units", "fail", "high", "deny", 1},
      }));
  CAPTURE(rule);
  const json& r = results[index];
  CHECK(r["rule"] == rule);
  CHECK(r["policy"] == "gpuadmit");
  CHECK(r["source"] == "gpuadmit");
  CHECK(r["result"] == result);
  CHECK(r["severity"] == severity);
  CHECK(r["properties"]["action"] == action);
  CHECK(r["properties"]["objects"] == std::to_string(resources));
  CHECK(r["resources"].size() == resources);
  CHECK(r["timestamp"] == json{{"seconds", 1700000000}, {"nanos", 0}});
  for (const json& resource : r["resources"]) CHECK(resource["namespace"] == "ml-team");
}

TEST_CASE("a resource without a uid is named without one", "[policy-report]") {
  const json results = policy_report(two_namespaces(), "ml-team", 0)["results"];
  CHECK_FALSE(results[0]["resources"][0].contains("uid"));
  CHECK(results[0]["resources"][1]["uid"] == "u-2");
}

TEST_CASE("a long message is cut at the limit without splitting a UTF-8 character", "[policy-report]") {
  Audit audit = two_namespaces();
  std::string message(gpuadmit::admission::kMaxMessageBytes - 4, 'x');
  message += "é and more";  // é straddles the cut
  audit.rows[{"ml-team", "cuda-driver", AuditVerdict::kWarned}].example = message;
  const std::string cut = policy_report(audit, "ml-team", 0)["results"][0]["message"];
  CHECK(cut.size() <= gpuadmit::admission::kMaxMessageBytes);
  CHECK(cut.substr(cut.size() - 3) == "...");
  CHECK(json(cut).dump().find("\\ufffd") == std::string::npos);
  CHECK(cut.find("\xc3...") == std::string::npos);
}

TEST_CASE("a namespace's results stop at kMaxResults while the summary counts them all", "[policy-report]") {
  Audit audit;
  audit.totals["big"] = {1000, 1000};
  for (std::size_t i = 0; i < gpuadmit::admission::kMaxResults + 10; ++i) {
    AuditRow row;
    row.count = 1;
    audit.rows[{"big", "rule-" + std::to_string(1000 + i), AuditVerdict::kDenied}] = row;
  }
  const json report = policy_report(audit, "big", 0);
  CHECK(report["results"].size() == gpuadmit::admission::kMaxResults);
  CHECK(report["summary"]["fail"] == gpuadmit::admission::kMaxResults + 10);
  CHECK(report["summary"]["pass"] == 0);
}
