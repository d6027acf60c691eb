// RuleContext keeps the answers every rule asks (is this a GPU pod, how many GPUs a container holds) until
// the typed pod changes: a fix that adds a GPU must be seen by the rules after it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "../../../src/policy/rule_context.hpp"
#include "gpuadmit/k8s/pod_parser.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::container_part;
using gpuadmit::policy::Decision;
using gpuadmit::policy::Mode;
using gpuadmit::policy::ObjectEdits;
using gpuadmit::policy::RuleContext;
using gpuadmit::policy::RuleSet;

gpuadmit::k8s::Pod parsed(const gpuadmit::k8s::JsonValue& object) {
  auto pod = gpuadmit::k8s::parse_pod(object);
  if (!pod) FAIL(pod.error().message);
  return std::move(*pod);
}

// A Mutate-mode RuleContext over a pod, with what it refers to (so not to be copied or moved).
struct Fixture {
  explicit Fixture(const std::string& yaml)
      : source(gpuadmit::test::document_of(gpuadmit::test::yaml(yaml))),
        edits(source.root()),
        ctx(edits, parsed(source.root()), rules, Mode::kMutate, decision, nullptr) {}
  gpuadmit::k8s::OwnedJsonDocument source;
  RuleSet rules;
  Decision decision;
  ObjectEdits edits;
  RuleContext ctx;
};

}  // namespace

TEST_CASE("the GPU answers follow a fix that adds a GPU, and only after the refresh", "[rules]") {
  Fixture fixture(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - {name: train, image: pytorch}
    - {name: gpu, resources: {limits: {nvidia.com/gpu: 2}}}
)");
  RuleContext& ctx = fixture.ctx;

  CHECK(ctx.is_gpu_pod());
  CHECK(ctx.gpu_units(ctx.pod().containers[0]) == 0);
  CHECK(ctx.gpu_units(ctx.pod().containers[1]) == 2);
  CHECK(ctx.gpu_units() == 2);

  ctx.edit(container_part(ctx.pod().containers[0], "resources"))["limits"]["nvidia.com/gpu"] = 1;
  CHECK(ctx.gpu_units(ctx.pod().containers[0]) == 0);  // the typed pod is not read back yet
  REQUIRE(ctx.refresh().ok());
  CHECK(ctx.gpu_units(ctx.pod().containers[0]) == 1);
  CHECK(ctx.gpu_units() == 3);

  // A container that is not the pod's own is counted, not looked up.
  gpuadmit::k8s::Container other = ctx.pod().containers[1];
  CHECK(ctx.gpu_units(other) == 2);
}

TEST_CASE("a pod becomes a GPU pod when a fix gives it its first GPU", "[rules]") {
  Fixture fixture("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: train}]\n");
  RuleContext& ctx = fixture.ctx;
  CHECK_FALSE(ctx.is_gpu_pod());
  ctx.edit(container_part(ctx.pod().containers[0], "resources"))["limits"]["nvidia.com/gpu"] = 1;
  REQUIRE(ctx.refresh().ok());
  CHECK(ctx.is_gpu_pod());
}

TEST_CASE("GPU counts that would overflow int64 saturate instead of wrapping", "[rules]") {
  // Fuzz findings R-1: 2^63-1 nvidia.com/gpu plus 1 amd.com/gpu overflowed the sum (UB), and two such
  // resources plus 3 wrapped to exactly 1 GPU in a release build.
  Fixture fixture(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
    - name: a
      resources: {limits: {nvidia.com/gpu: "9223372036854775807", amd.com/gpu: "1"}}
    - name: b
      resources: {limits: {nvidia.com/gpu: "9223372036854775807", amd.com/gpu: "3"}}
)");
  RuleContext& ctx = fixture.ctx;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  CHECK(ctx.gpu_units(ctx.pod().containers[0]) == kMax);
  CHECK(ctx.gpu_units(ctx.pod().containers[1]) == kMax);
  CHECK(ctx.gpu_units() == kMax);
}
