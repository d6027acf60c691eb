// gpu-limit-equals-request: the API server rejects a GPU request without a limit, or different from it;
// a missing limit is set to the request, a different one is denied rather than guessed.
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::test::check;
using gpuadmit::test::pod_with_spec;
using gpuadmit::test::rules_of;
using nlohmann::json;

TEST_CASE("a GPU request without a limit gets the limit set to the request",
          "[rules][gpu-limit-equals-request]") {
  const auto r = check(gpuadmit::test::fixture("pods/gpu-request-without-limit.yaml"));
  CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "2");
  const json expected_op = {
      {"op", "add"}, {"path", "/spec/containers/0/resources/limits/nvidia.com~1gpu"}, {"value", "2"}};
  CHECK(std::find(r.patch.begin(), r.patch.end(), expected_op) != r.patch.end());
}

TEST_CASE("a GPU request different from its limit is denied, not guessed",
          "[rules][gpu-limit-equals-request]") {
  const auto r = check(pod_with_spec(
      "  containers: [{name: a, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 2}}}]"));
  CHECK_FALSE(r.allowed);
  CHECK(rules_of(r.violations) == std::vector<std::string>{"gpu-limit-equals-request"});
}
