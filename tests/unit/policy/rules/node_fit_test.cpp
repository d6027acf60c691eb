// node-fit: cpu and memory over what any node can hold, the scheduler's "Insufficient memory".
#include <catch2/catch.hpp>

#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::view_of;
using nlohmann::json;

json pod(const std::string& cpu, const std::string& memory) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: ")" +
                              cpu + R"(", memory: )" + memory + R"(, nvidia.com/gpu: 1}}
)");
}

}  // namespace

TEST_CASE("node-fit denies cpu or memory beyond every GPU node's allocatable, with the numbers",
          "[node-fit]") {
  auto [cpu, memory, fragment] = GENERATE(table<std::string, std::string, std::string>({
      {"4", "32Gi", "2 nodes have 27107535Ki memory, the pod asks for 32Gi"},
      {"8", "16Gi", "2 nodes have 7910m cpu, the pod asks for 8"},
  }));
  CAPTURE(cpu, memory);
  const auto view = view_of("gke-t4");
  const auto r = check(pod(cpu, memory), gpuadmit::test::policy_with(""), &view);
  REQUIRE_FALSE(r.allowed);
  REQUIRE(r.violations.size() == 1);
  CHECK(r.violations[0].rule == "node-fit");
  CHECK_THAT(r.violations[0].message,
             Catch::Contains(fragment) && Catch::Contains("1 node lacks nvidia.com/gpu"));
}

TEST_CASE("node-fit lets through cpu and memory that one GPU node holds", "[node-fit]") {
  const auto view = view_of("gke-t4");
  const auto r = check(pod("7", "24Gi"), gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
}
