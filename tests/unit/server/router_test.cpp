// The router and handlers without sockets: the HTTP surface is plain functions.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "gpuadmit/server/handlers.hpp"
#include "gpuadmit/server/router.hpp"

namespace gpuadmit::server {
namespace {

TEST_CASE("the router matches method and path, ignoring the query string") {
  Router router;
  router.add("POST", "/validate", [](const Request&) { return text_response(200, "validate"); });
  router.add("GET", "/healthz", [](const Request&) { return text_response(200, "health"); });
  router.add("HEAD", "/healthz", [](const Request&) { return text_response(200, "head"); });

  auto [method, target, status, body, allow] =
      GENERATE(table<std::string, std::string, int, std::string, std::string>({
          {"POST", "/validate", 200, "validate\n", ""},
          {"POST", "/validate?timeout=10s", 200, "validate\n", ""},
          {"POST", "/validate#frag", 200, "validate\n", ""},
          {"GET", "/validate", 405, "method not allowed; use POST\n", "POST"},
          {"PUT", "/healthz", 405, "method not allowed; use GET, HEAD\n", "GET, HEAD"},
          {"POST", "/validate/", 404, "not found\n", ""},
          {"POST", "/VALIDATE", 404, "not found\n", ""},
          {"GET", "", 404, "not found\n", ""},
      }));
  INFO(method << " " << target);
  const Response response = router.route({method, target, "", ""});
  CHECK(response.status == status);
  CHECK(response.body == body);
  if (!allow.empty()) {
    REQUIRE(response.headers.size() == 1);
    CHECK(response.headers[0] == std::pair<std::string, std::string>("Allow", allow));
  }
}

TEST_CASE("JSON media types are recognised with parameters and in any case") {
  auto [content_type, json] = GENERATE(table<std::string, bool>({
      {"application/json", true},
      {"application/json; charset=utf-8", true},
      {"Application/JSON", true},
      {" application/json ;charset=UTF-8", true},
      {"application/json-patch+json", false},
      {"text/plain", false},
      {"", false},
      {"application/jsonx", false},
  }));
  INFO(content_type);
  CHECK(is_json_media_type(content_type) == json);
}

struct FakeReview {
  int calls = 0;
  std::string last_body;
  const policy::RuleSet* last_rules = nullptr;
};

TEST_CASE("the review handler hands the body and the policy snapshot to the review and records the outcome") {
  auto store = PolicyStore::open(std::nullopt);
  REQUIRE(store);
  Metrics metrics("test");
  auto fake = std::make_shared<FakeReview>();
  ReviewDependencies deps{
      *store, metrics, JsonLog::discard(),
      [fake](std::string_view body, admission::Endpoint, const policy::PolicySet& policies,
             const policy::ClusterView*, const admission::PolicyObjectCheck&, policy::ReviewBudget&) {
        ++fake->calls;
        fake->last_body = body;
        fake->last_rules = policies.cluster.get();
        admission::Outcome outcome;
        outcome.verdict = admission::Verdict::kDenied;
        outcome.body = R"({"response":{}})";
        outcome.rules_fired = {"guaranteed-qos"};
        return outcome;
      }};
  const Handler handler = review_handler(admission::Endpoint::kValidate, deps);

  SECTION("a JSON body is reviewed") {
    const Response response = handler({"POST", "/validate", "application/json", "{\"x\":1}"});
    CHECK(response.status == 200);
    CHECK(response.content_type == "application/json");
    CHECK(fake->calls == 1);
    CHECK(fake->last_body == "{\"x\":1}");
    CHECK(fake->last_rules == store->current().get());
    const std::string text = metrics.render();
    CHECK_THAT(
        text, Catch::Contains(R"(gpuadmit_admission_reviews_total{webhook="validate",verdict="denied"} 1)"));
    CHECK_THAT(text,
               Catch::Contains(
                   R"(gpuadmit_admission_rule_findings_total{rule="guaranteed-qos",action="enforce"} 1)"));
    CHECK_THAT(text,
               Catch::Contains(R"(gpuadmit_admission_review_duration_seconds_count{webhook="validate"} 1)"));
  }
  SECTION("another media type is 415 and never reaches the review") {
    const Response response = handler({"POST", "/validate", "application/yaml", "a: 1"});
    CHECK(response.status == 415);
    CHECK(fake->calls == 0);
  }
}

TEST_CASE("a review that throws is answered 500 and counted as could not decide") {
  auto store = PolicyStore::open(std::nullopt);
  REQUIRE(store);
  Metrics metrics("test");
  ReviewDependencies deps{
      *store, metrics, JsonLog::discard(),
      [](std::string_view, admission::Endpoint, const policy::PolicySet&, const policy::ClusterView*,
         const admission::PolicyObjectCheck&,
         policy::ReviewBudget&) -> admission::Outcome { throw std::runtime_error("boom"); }};
  const Response response =
      review_handler(admission::Endpoint::kMutate, deps)({"POST", "/mutate", "application/json", "{}"});
  CHECK(response.status == 500);
  CHECK_THAT(metrics.render(), Catch::Contains(R"(gpuadmit_admission_errors_total{webhook="mutate"} 1)"));
}

TEST_CASE("the API server's timeout on the call is read from the target") {
  auto [target, ms] = GENERATE(table<std::string, std::int64_t>({
      {"/mutate?timeout=3s", 3000},
      {"/validate?x=1&timeout=10s", 10000},
      {"/mutate?timeout=250ms", 250},
      {"/mutate", -1},
      {"/mutate?timeout=", -1},
      {"/mutate?timeout=3", -1},
      {"/mutate?timeout=-3s", -1},
      {"/mutate?timeout=1.5s", -1},
      {"/mutate?timeout=99999999999999999999s", -1},
  }));
  CAPTURE(target);
  const auto got = api_server_timeout(target);
  CHECK((got ? got->count() : -1) == ms);
}

TEST_CASE("each review gets a deadline: the server's, or half the API server's timeout when shorter") {
  auto store = PolicyStore::open(std::nullopt);
  REQUIRE(store);
  Metrics metrics("test");
  auto [target, configured, expected] = GENERATE(table<std::string, int, std::string>({
      {"/mutate", 60, "60 ms"},
      {"/mutate?timeout=3s", 60, "60 ms"},
      {"/mutate?timeout=100ms", 1000, "50 ms"},
      {"/mutate?timeout=1s", 80, "80 ms"},
  }));
  CAPTURE(target);
  std::string said;
  bool before = false;
  ReviewDependencies deps{
      *store, metrics, JsonLog::discard(),
      [&](std::string_view, admission::Endpoint, const policy::PolicySet&, const policy::ClusterView*,
          const admission::PolicyObjectCheck&, policy::ReviewBudget& budget) {
        before = budget.allowance() > 0;
        // Waits out the deadline on the clock the handler gave the budget (2 s at most).
        for (int i = 0; i < 2000 && budget.allowance() > 0; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        said = budget.exhausted();
        return admission::Outcome{};
      }};
  deps.review_deadline = std::chrono::milliseconds(configured);
  review_handler(admission::Endpoint::kMutate, deps)({"POST", target, "application/json", "{}"});
  CHECK(before);
  CHECK(said == "not evaluated: the review passed its deadline of " + expected);
  CHECK_THAT(metrics.render(),
             Catch::Contains(R"(gpuadmit_admission_reviews_over_budget_total{webhook="mutate"} 1)"));
}

TEST_CASE("readyz turns 503 with the reason while draining or while a condition is unmet") {
  Readiness readiness;
  bool synced = true;
  readiness.add_condition("cluster view synced", [&] { return synced; });
  const Handler handler = ready_handler(readiness);
  CHECK(handler({}).status == 200);
  synced = false;
  CHECK(handler({}).status == 503);
  CHECK(handler({}).body == "cluster view synced: not yet\n");
  synced = true;
  readiness.set_draining();
  CHECK(handler({}).status == 503);
  CHECK(handler({}).body == "draining: shutting down\n");
}

TEST_CASE("reviews run on the review workers; probes, metrics and unknown paths on the I/O thread") {
  auto store = PolicyStore::open(std::nullopt);
  Metrics metrics("test");
  Readiness readiness;
  const ReviewDependencies deps{*store, metrics, JsonLog::discard(), {}};
  const Router router = make_router(deps, readiness, {});
  auto [method, target, placement] = GENERATE(table<std::string, std::string, Placement>({
      {"POST", "/mutate?timeout=3s", Placement::kWorker},
      {"POST", "/validate", Placement::kWorker},
      {"GET", "/healthz", Placement::kIoThread},
      {"GET", "/readyz", Placement::kIoThread},
      {"GET", "/metrics", Placement::kIoThread},
      {"GET", "/mutate", Placement::kIoThread},  // 405
      {"POST", "/nowhere", Placement::kIoThread},
  }));
  CAPTURE(method, target);
  CHECK(router.placement({method, target, "application/json", ""}) == placement);
}

}  // namespace
}  // namespace gpuadmit::server
