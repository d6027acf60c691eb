#include <catch2/catch.hpp>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "support/fixtures.hpp"

using gpuadmit::k8s::ContainerKind;

TEST_CASE("a pod's containers come in order: init and sidecars, then app containers; never ephemeral",
          "[pod]") {
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(R"(
spec:
  initContainers:
    - {name: init}
    - {name: sidecar, restartPolicy: Always}
  containers:
    - {name: app, image: nvcr.io/nvidia/pytorch:24.01-py3, command: [torchrun], args: ["--nproc_per_node=2"]}
  ephemeralContainers:
    - {name: debugger}
)"));
  REQUIRE(pod.ok());
  REQUIRE(pod->containers.size() == 3);
  CHECK(pod->containers[0].kind == ContainerKind::kInit);
  CHECK(pod->containers[1].kind == ContainerKind::kSidecar);
  CHECK(pod->containers[1].index == 1);
  CHECK(pod->containers[2].kind == ContainerKind::kRegular);
  CHECK(pod->containers[2].index == 0);
  CHECK(pod->containers[2].args == std::vector<std::string>{"--nproc_per_node=2"});
}

TEST_CASE("wrong types in a pod are errors that name the field", "[pod]") {
  auto [spec, fragment] = GENERATE(table<const char*, const char*>({
      {"spec: {containers: {name: a}}", "spec.containers: expected a list"},
      {"spec: {containers: [{name: 3}]}", "spec.containers[0].name: expected a string"},
      {"spec: {containers: [{name: a, resources: {limits: {cpu: [1]}}}]}",
       "spec.containers[0].resources.limits.cpu: expected a quantity"},
      {"spec: {containers: [{name: a, resources: {limits: {memory: lots}}}]}",
       "spec.containers[0].resources.limits.memory: invalid quantity \"lots\""},
      {"spec: {containers: [{name: a}], tolerations: [{key: k, tolerationSeconds: soon}]}",
       "spec.tolerations[0].tolerationSeconds: expected an integer"},
      {"spec: {containers: [{name: a}], nodeSelector: {gpu: [a100]}}", "spec.nodeSelector.gpu: expected a string"},
      {"metadata: {labels: {a: {b: c}}}\nspec: {containers: []}", "metadata.labels.a: expected a string"},
      {"metadata: {name: x}", "spec: missing"},
      {"spec: {containers: [{name: a}], volumes: [{name: v, emptyDir: {sizeLimit: huge}}]}",
       "spec.volumes[0].emptyDir.sizeLimit"},
  }));
  CAPTURE(spec);
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(spec));
  REQUIRE_FALSE(pod.ok());
  CHECK_THAT(pod.error().message, Catch::Contains(fragment));
}

TEST_CASE("quantities written as YAML numbers are accepted like the API server accepts them", "[pod]") {
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(
      "spec: {containers: [{name: a, resources: {limits: {cpu: 2, nvidia.com/gpu: 0.5, memory: 1e9}}}]}"));
  REQUIRE(pod.ok());
  const auto& limits = pod->containers[0].resources.limits;
  CHECK(limits.at("cpu").to_string() == "2");
  CHECK(limits.at("nvidia.com/gpu").to_string() == "500m");
  CHECK(limits.at("memory").to_string() == "1G");
}
