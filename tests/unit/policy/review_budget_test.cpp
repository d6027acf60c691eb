// A review's selector budget and deadline (policy/review_budget.hpp): a tenant's claim cannot hold a
// review for long, and what was not evaluated is said, never silently allowed.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::ReviewBudget;
using nlohmann::json;

// 32 selectors that each spend a selector's whole budget (1,000,000 steps) on quadratic contains(), and
// spell `uuid`, which dra-cluster's GPUs each carry alone: each is evaluated on every device.
json hostile_template() {
  const std::string big(3800, 'a');
  std::string expression = "cel.bind(uuid, \"" + big + "\", false";
  for (int i = 0; i < 50; ++i) expression += "||uuid.contains(uuid)==false";
  expression += ")";
  json selectors = json::array();
  for (int i = 0; i < 32; ++i) selectors.push_back({{"cel", {{"expression", expression}}}});
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", "hostile"}, {"namespace", "ml-team"}}},
          {"spec",
           {{"spec",
             {{"devices",
               {{"requests",
                 {{{"name", "gpus"},
                   {"exactly",
                    {{"deviceClassName", "gpu.nvidia.com"},
                     {"allocationMode", "All"},
                     {"selectors", selectors}}}}}}}}}}}}};
}

// 32 distinct selectors of 10 KiB of regular expressions: costly to compile, whatever the devices.
json costly_to_compile_template() {
  json t = hostile_template();
  t["metadata"]["name"] = "costly-to-compile";
  json& selectors = t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"];
  for (int k = 0; k < 32; ++k) {
    std::string expression = "cel.bind(uuid, 'x', false";
    for (int i = 0; expression.size() < 10'000; ++i)
      expression += "||uuid.matches('(a|aa)*b" + std::to_string(k * 1000 + i) + "')";
    selectors[k]["cel"]["expression"] = expression + ")";
  }
  return t;
}

gpuadmit::policy::ClusterView view_with_hostile_template() {
  json list = gpuadmit::test::fixture("cluster/dra-cluster.yaml");
  list["items"].push_back(hostile_template());
  list["items"].push_back(costly_to_compile_template());
  auto snapshot = gpuadmit::policy::snapshot_from_list(list);
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return {std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
}

json claim_pod(const std::string& template_name) {
  return gpuadmit::test::dra_pod("resourceClaimTemplateName: " + template_name);
}

struct Judged {
  gpuadmit::policy::Decision decision;
  std::int64_t spent = 0;
};

Judged judge(const json& pod, const gpuadmit::policy::RuleSet& rules, ReviewBudget& budget,
             const gpuadmit::policy::ClusterView& view) {
  const auto document = gpuadmit::test::document_of(pod);
  gpuadmit::policy::Request request{document.root(), "ml-team", gpuadmit::policy::Mode::kValidate, &view};
  request.budget = &budget;
  auto decision = gpuadmit::policy::evaluate(request, rules);
  if (!decision) throw std::runtime_error(decision.error().message);
  return {std::move(*decision), budget.spent()};
}

// dra-claims' findings; the other rules judge the pod's resources, which these tests leave unset.
std::string all_of(const std::vector<gpuadmit::policy::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (f.rule == "dra-claims") out += f.rule + ": " + f.message + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("a review stops at its selector budget and says so", "[dra-claims][budget]") {
  // Unbounded, this claim costs 32 selectors × 18 devices × 1,000,000 steps; the review stops at its budget,
  // counts the rest as matching (unsure never denies) and warns, or denies under overBudget: enforce.
  auto [policy, allowed] = GENERATE(table<std::string, bool>({
      {"", true},
      {"    dra-claims: {overBudget: enforce}\n", false},
      // Never more than the rule's own action.
      {"    dra-claims: {action: warn, overBudget: enforce}\n", true},
  }));
  CAPTURE(policy);
  const auto view = view_with_hostile_template();
  ReviewBudget budget(5'000'000);
  const auto judged = judge(claim_pod("hostile"), gpuadmit::test::policy_with(policy), budget, view);
  CHECK(judged.spent >= 5'000'000);
  // An evaluation stops at the first charge past what was left: one contains() of 3,801 bytes is 225,000.
  CHECK(judged.spent <= 5'250'000);
  CHECK(all_of(judged.decision.violations).empty() == allowed);
  const std::string said = all_of(allowed ? judged.decision.warnings : judged.decision.violations);
  CHECK_THAT(said, Catch::Contains("dra-claims: not every device selector of the pod's claims was evaluated "
                                   "(the review spent its budget of 5000000 selector steps)"));
  CHECK_THAT(said, Catch::Contains("Fix: use fewer or cheaper selectors"));
  // What kubectl's Warning line shows (120 characters at most) says why, whole.
  for (const auto& f : allowed ? judged.decision.warnings : judged.decision.violations) {
    if (f.rule == "dra-claims")
      CHECK(f.summary ==
            "dra-claims: selectors not evaluated: the review spent its budget of 5000000 selector steps");
  }
}

TEST_CASE("compiling a review's selectors is charged to its budget", "[dra-claims][budget]") {
  // Compiling 32 × 10 KiB of distinct regular expressions took 425 ms at -O2: at 200 steps a byte, the review
  // compiles five of them, and the rest count as matching, said as running out of budget is.
  const auto view = view_with_hostile_template();
  ReviewBudget budget;
  const auto judged = judge(claim_pod("costly-to-compile"), gpuadmit::test::policy_with(""), budget, view);
  CHECK(judged.spent >= gpuadmit::policy::kReviewStepBudget);
  // kMaxSelectorLength is a size (unsigned); the budget counts in signed steps.
  constexpr auto kMostCompiled = static_cast<std::int64_t>(gpuadmit::policy::kMaxSelectorLength) *
                                 gpuadmit::policy::kCompileStepsPerByte;
  CHECK(judged.spent <= gpuadmit::policy::kReviewStepBudget + kMostCompiled);
  CHECK(all_of(judged.decision.violations).empty());
  CHECK_THAT(
      all_of(judged.decision.warnings),
      Catch::Contains("not every device selector of the pod's claims was evaluated (the review spent its "
                      "budget of 10000000 selector steps)"));
}

TEST_CASE("a review past its deadline evaluates no more selectors and says so", "[dra-claims][budget]") {
  const auto view = view_with_hostile_template();
  int asked = 0;
  // The server's clock, stood in for: the deadline passes at the third time it is asked (before each compile
  // and each evaluation).
  ReviewBudget budget(
      gpuadmit::policy::kReviewStepBudget, [&asked] { return ++asked > 2; }, "1s");
  const auto judged = judge(claim_pod("hostile"), gpuadmit::test::policy_with(""), budget, view);
  CHECK(judged.spent <= 2'000'000);  // what was compiled and evaluated before, then nothing
  CHECK(all_of(judged.decision.violations).empty());
  CHECK_THAT(all_of(judged.decision.warnings),
             Catch::Contains("not every device selector of the pod's claims was evaluated (the review "
                             "passed its deadline of 1s)"));
}

TEST_CASE("an ordinary claim spends little of the budget and is judged in full", "[dra-claims][budget]") {
  // The same templates as dra-claims' tests: a selector no device matches is still denied, and a claim that
  // fits is allowed without a word about budgets.
  auto [name, allowed] = GENERATE(table<std::string, bool>({{"h200-only", false}, {"one-gpu", true}}));
  CAPTURE(name);
  const auto view = gpuadmit::test::view_of("dra-cluster");
  ReviewBudget budget;
  const auto judged = judge(claim_pod(name), gpuadmit::test::policy_with(""), budget, view);
  CHECK(all_of(judged.decision.violations).empty() == allowed);
  CHECK(budget.exhausted().empty());
  CHECK(judged.spent < 100'000);
  CHECK_THAT(all_of(judged.decision.warnings), !Catch::Contains("not every device selector"));
}
