// The whole review of an AdmissionReview body, on both endpoints, with and without a cluster view (the
// default policy; tests/fixtures/cluster/gpu-cluster.yaml). What the API server needs from every answer:
//  - 400 only for a body that is not a review, and then never an allow;
//  - else a review that echoes the uid, allows exactly when the verdict is an allow, and carries a patch
//    only from /mutate, only with the verdict "patched";
//  - the patch applies to the object, and a second /mutate of the patched object patches nothing (the
//    fixes are a fixed point, as the API server's reinvocation needs).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "gpuadmit/admission/review.hpp"
#include "gpuadmit/cluster/api_config.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/k8s/json_input.hpp"
#include "support/cluster_view_fixture.hpp"

namespace {

using gpuadmit::admission::Endpoint;
using gpuadmit::admission::Outcome;
using gpuadmit::admission::Verdict;
using gpuadmit::fuzz::require;
using nlohmann::json;

const gpuadmit::policy::ClusterView& cluster_view() {
  return gpuadmit::test::shared_gpu_cluster_view();
}

// The patched object inside the same review, for the second /mutate.
std::string with_object(json request_review, const json& object) {
  request_review["request"]["object"] = object;
  return request_review.dump();
}

void check(std::string_view body, Endpoint endpoint, const gpuadmit::policy::ClusterView* view, bool again) {
  const auto& rules = gpuadmit::config::default_rule_set();
  const Outcome outcome = gpuadmit::admission::review(body, endpoint, rules, view);
  if (outcome.http_status == 400) {
    require(outcome.verdict == Verdict::kMalformed, "400 only for a malformed body");
    require(outcome.body.find("\"allowed\":true") == std::string::npos, "a 400 never allows");
    return;
  }
  require(outcome.http_status == 200, "200 or 400", std::to_string(outcome.http_status));
  const json answer = json::parse(outcome.body, nullptr, false);
  require(answer.is_object() && answer.contains("response"), "the answer is an AdmissionReview",
          outcome.body);
  const auto request = gpuadmit::k8s::parse_json(body);
  require(request.ok() && request->contains("request") && (*request)["request"].is_object(),
          "a body judged holds a request");
  const json& req = (*request)["request"];
  const json& response = answer["response"];
  require(response.value("uid", json()) == req.value("uid", json()), "the uid is echoed", outcome.body);
  const bool allowed = response.value("allowed", false);
  require(allowed == (outcome.verdict == Verdict::kAllowed || outcome.verdict == Verdict::kPatched),
          "allowed exactly when the verdict allows", outcome.body);
  if (!response.contains("patch")) return;
  require(endpoint == Endpoint::kMutate && outcome.verdict == Verdict::kPatched,
          "a patch only from /mutate, with the verdict patched", outcome.body);
  const auto patch_text = gpuadmit::cluster::decode_base64(response["patch"].get<std::string>());
  require(patch_text.ok(), "the patch is base64");
  const json patch = json::parse(*patch_text, nullptr, false);
  require(patch.is_array(), "the patch is a JSON Patch", *patch_text);
  json patched;
  try {
    patched = req.value("object", json()).patch(patch);
  } catch (const json::exception& e) {
    gpuadmit::fuzz::broken("the patch applies to the object", std::string(e.what()) + ": " + *patch_text);
  }
  if (!again) return;
  const std::string second = with_object(*request, patched);
  const Outcome twice = gpuadmit::admission::review(second, Endpoint::kMutate, rules, view);
  require(twice.verdict != Verdict::kPatched, "a second /mutate of the patched object patches nothing",
          *patch_text + " then " + twice.body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  for (const Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate}) {
    check(body, endpoint, nullptr, true);
    check(body, endpoint, &cluster_view(), true);
  }
  return 0;
}
