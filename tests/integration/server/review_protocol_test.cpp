// The AdmissionReview contract end to end: real server, real TLS client, real admission::review.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/base64.hpp"
#include "support/test_webhook.hpp"

namespace gpuadmit::test {
namespace {

using nlohmann::json;

json post_review(TestWebhook& webhook, const std::string& target, const json& object,
                 const std::string& uid) {
  HttpsClient client = webhook.client();
  auto reply = client.request("POST", target, admission_review(object, uid));
  REQUIRE(reply);
  INFO(reply->body);
  REQUIRE(reply->status == 200);
  CHECK(reply->header("content-type") == "application/json");
  return json::parse(reply->body);
}

TEST_CASE("a mutate review echoes the uid and returns a base64 JSON Patch that applies to the object") {
  TestWebhook webhook;
  const json pod = fixture_pod("vit-b-burstable");
  const json review = post_review(webhook, "/mutate?timeout=10s", pod, "3f1c-uid-mutate");

  CHECK(review["apiVersion"] == "admission.k8s.io/v1");
  CHECK(review["kind"] == "AdmissionReview");
  const json& response = review["response"];
  CHECK(response["uid"] == "3f1c-uid-mutate");
  CHECK(response["allowed"] == true);
  REQUIRE(response["patchType"] == "JSONPatch");
  const json patch = json::parse(base64_decode(response["patch"].get<std::string>()));
  REQUIRE(patch.is_array());
  REQUIRE_FALSE(patch.empty());
  const json patched = pod.patch(patch);
  // This webhook has no cluster view, so guaranteed-qos raises no request (it cannot tell that the limits
  // fit a node); the patch adds the GPU toleration and the /dev/shm volume.
  CHECK(patched["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu");
  CHECK(patched["spec"]["volumes"].back()["name"] == "dshm");
  CHECK(patched["spec"]["containers"][0]["resources"] == pod["spec"]["containers"][0]["resources"]);
}

TEST_CASE("a compliant pod on mutate is allowed with no patch field") {
  TestWebhook webhook;
  const json first = post_review(webhook, "/mutate", fixture_pod("vit-b-burstable"), "uid-1");
  const json fixed = fixture_pod("vit-b-burstable")
                         .patch(json::parse(base64_decode(first["response"]["patch"].get<std::string>())));
  const json review = post_review(webhook, "/mutate", fixed, "uid-2");
  CHECK(review["response"]["allowed"] == true);
  CHECK_FALSE(review["response"].contains("patch"));
  CHECK_FALSE(review["response"].contains("patchType"));
}

TEST_CASE("a validate review of a violation is a 403 Forbidden denial with the message and no patch") {
  TestWebhook webhook;
  const json review = post_review(webhook, "/validate", fixture_pod("fractional-gpu"), "uid-deny");
  const json& response = review["response"];
  CHECK(response["uid"] == "uid-deny");
  CHECK(response["allowed"] == false);
  CHECK(response["status"]["code"] == 403);
  CHECK(response["status"]["reason"] == "Forbidden");
  CHECK_THAT(response["status"]["message"].get<std::string>(), Catch::Contains("[gpu-whole-units]"));
  CHECK_FALSE(response.contains("patch"));
  CHECK(webhook.metric(R"(gpuadmit_admission_reviews_total{webhook="validate",verdict="denied"})") == 1);
  CHECK(webhook.metric(
            R"(gpuadmit_admission_rule_findings_total{rule="gpu-whole-units",action="enforce"})") == 1);
}

TEST_CASE("warn rules reach the response as warnings") {
  TestWebhook webhook;
  // A CUDA image that requests no GPU: gpu-intent warns.
  const json review = post_review(webhook, "/validate", fixture_pod("resnet50-no-gpu"), "uid-warn");
  const json& response = review["response"];
  CHECK(response["allowed"] == true);
  REQUIRE(response.contains("warnings"));
  REQUIRE_FALSE(response["warnings"].empty());
  for (const json& warning : response["warnings"]) {
    const std::string text = warning.get<std::string>();
    CHECK(text.size() <= 120);
    CHECK(text.find('\n') == std::string::npos);
  }
}

TEST_CASE("a body that is not an AdmissionReview is a 400 with a one-line reason") {
  TestWebhook webhook;
  HttpsClient client = webhook.client();
  auto reply = client.request("POST", "/validate", R"({"apiVersion":"v1","kind":"Pod"})");
  REQUIRE(reply);
  CHECK(reply->status == 400);
  CHECK(reply->body.find('\n') == reply->body.size() - 1);
  CHECK(webhook.metric(R"(gpuadmit_admission_reviews_total{webhook="validate",verdict="malformed"})") == 1);
}

}  // namespace
}  // namespace gpuadmit::test
