// shm-size: container runtimes give /dev/shm 64 MiB, and PyTorch's DataLoader workers pass every batch
// through it; GPU containers get a memory-backed one sized from their memory limit, and one the user set
// is kept.
#include <catch2/catch.hpp>

#include <string>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::Mode;
using gpuadmit::test::run;
using nlohmann::json;

TEST_CASE("shm-size mounts a memory-backed /dev/shm sized from the memory limit", "[shm-size]") {
  auto [memory, expected] = GENERATE(table<std::string, std::string>({
      {"32Gi", "8Gi"},     // 25 %
      {"2Gi", "1Gi"},      // raised to the minimum
      {"1000Gi", "64Gi"},  // capped at the maximum
      {"10Gi", "3Gi"},     // 2.5Gi rounded up to a whole Gi
  }));
  CAPTURE(memory);
  json pod = gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: train
      image: trainer
      resources: {limits: {cpu: "8", nvidia.com/gpu: 1}}
    - name: logger
      image: busybox
      resources: {limits: {cpu: "1", memory: 1Gi}}
)");
  pod["spec"]["containers"][0]["resources"]["limits"]["memory"] = memory;
  const auto decision = run(pod, Mode::kMutate);
  const json fixed = pod.patch(decision.patch);
  REQUIRE(fixed["spec"]["volumes"].size() == 1);
  CHECK(fixed["spec"]["volumes"][0] ==
        json{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", expected}}}});
  CHECK(fixed["spec"]["containers"][0]["volumeMounts"] ==
        json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}}));
  CHECK_FALSE(fixed["spec"]["containers"][1].contains("volumeMounts"));  // not a GPU container
  CHECK(run(fixed, Mode::kValidate).allowed());
}

TEST_CASE("shm-size keeps a /dev/shm the user set and warns when it is too small or on disk", "[shm-size]") {
  auto [volume, warning] = GENERATE(table<std::string, std::string>({
      {R"({"name": "shm", "emptyDir": {"medium": "Memory"}})", ""},
      {R"({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}})", "is only 256Mi"},
      {R"({"name": "shm", "emptyDir": {}})", "is not memory-backed"},
      // The node's own /dev/shm is a tmpfs: memory-backed, of the node's size.
      {R"({"name": "shm", "hostPath": {"path": "/dev/shm"}})", ""},
      {R"({"name": "shm", "hostPath": {"path": "/dev/shm/", "type": "Directory"}})", ""},
      {R"({"name": "shm", "hostPath": {"path": "/data/shm"}})", "is not memory-backed"},
  }));
  CAPTURE(volume);
  json pod = gpuadmit::test::fixture("pods/good-gpu-pod.yaml");
  pod["spec"]["volumes"] = json::array({json::parse(volume)});
  pod["spec"]["containers"][0]["volumeMounts"] = json::array({{{"name", "shm"}, {"mountPath", "/dev/shm/"}}});
  const auto mutated = run(pod, Mode::kMutate);
  CHECK(mutated.patch.empty());
  const auto validated = run(pod, Mode::kValidate);
  CHECK(validated.allowed());
  if (warning.empty()) {
    CHECK(validated.warnings.empty());
  } else {
    REQUIRE(validated.warnings.size() == 1);
    CHECK_THAT(validated.warnings[0].summary, Catch::Contains(warning));
  }
}
