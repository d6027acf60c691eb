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
      {"spec: {containers: [{name: a}], nodeSelector: {gpu: [a100]}}",
       "spec.nodeSelector.gpu: expected a string"},
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

TEST_CASE("a field's error carries the field's JSON Pointer, escaped, so a reader can show its line",
          "[pod]") {
  auto [spec, pointer] = GENERATE(table<const char*, const char*>({
      {"spec: {containers: {name: a}}", "/spec/containers"},
      {"spec: {containers: [{name: a}, {name: 3}]}", "/spec/containers/1/name"},
      {"spec: {containers: [{name: a, resources: {limits: {nvidia.com/gpu: [1]}}}]}",
       "/spec/containers/0/resources/limits/nvidia.com~1gpu"},
      {"spec: {containers: [{name: a, resources: {requests: {memory: lots}}}]}",
       "/spec/containers/0/resources/requests/memory"},
      {"metadata: {annotations: {a~b: {c: d}}}\nspec: {containers: []}", "/metadata/annotations/a~0b"},
      {"spec: {containers: [{name: a}], tolerations: [{key: k, tolerationSeconds: soon}]}",
       "/spec/tolerations/0/tolerationSeconds"},
      {"metadata: {name: x}", ""},  // no spec: about the whole pod, no one member
  }));
  CAPTURE(spec);
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(spec));
  REQUIRE_FALSE(pod.ok());
  CHECK(pod.error().pointer == pointer);
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

TEST_CASE("a quantity left empty is zero, as the API server reads null", "[pod]") {
  // `nvidia.com/gpu:` with nothing after it is YAML's null; Quantity.UnmarshalJSON makes it 0.
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(R"(spec:
  containers:
    - name: a
      resources:
        limits:
          nvidia.com/gpu:
          memory: 1Gi
)"));
  REQUIRE(pod.ok());
  const auto& limits = pod->containers[0].resources.limits;
  CHECK(limits.at("nvidia.com/gpu") == gpuadmit::k8s::Quantity{});
  CHECK(limits.at("memory").to_string() == "1Gi");
}

namespace {

using gpuadmit::k8s::PodPart;
using Scope = PodPart::Scope;

const char* const kPartsBase = R"(
metadata:
  name: train
  labels: {team: ml}
  annotations: {a: "1"}
spec:
  initContainers:
    - {name: fetch}
    - name: proxy
      restartPolicy: Always
      resources: {limits: {cpu: "1"}}
  containers:
    - name: train
      env: [{name: A, value: "1"}]
      volumeMounts: [{name: data, mountPath: /data}]
      resources: {limits: {nvidia.com/gpu: 1}}
  nodeSelector: {pool: gpu}
  tolerations: [{key: k, operator: Exists}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
)";

// The part's holder in the pod JSON, as the part names it.
nlohmann::json& holder(nlohmann::json& pod, const PodPart& part) {
  nlohmann::json& scope = pod[part.scope == Scope::kMetadata ? "metadata" : "spec"];
  return part.scope == Scope::kContainer ? scope[std::string(part.array)][part.index] : scope;
}

struct Edited {
  gpuadmit::k8s::Pod pod;                      // the base pod, parsed
  nlohmann::json value;                        // the part's new value
  gpuadmit::Result<gpuadmit::k8s::Pod> whole;  // the base pod with the part replaced, parsed whole
};

Edited edit_base(const PodPart& part, const std::string& value_yaml) {
  nlohmann::json edited = gpuadmit::test::yaml(kPartsBase);
  auto pod = gpuadmit::k8s::parse_pod(edited);
  REQUIRE(pod.ok());
  nlohmann::json value = gpuadmit::test::yaml("value: " + value_yaml)["value"];
  holder(edited, part)[std::string(part.member)] = value;
  return {std::move(*pod), std::move(value), gpuadmit::k8s::parse_pod(edited)};
}

}  // namespace

TEST_CASE("reading one part of a pod back gives what parsing the whole edited pod gives", "[pod]") {
  auto [part, value_yaml] = GENERATE(table<PodPart, std::string>({
      {{Scope::kContainer, "containers", 0, "resources"},
       "{limits: {nvidia.com/gpu: 2, cpu: 8}, requests: {cpu: 8}}"},
      {{Scope::kContainer, "containers", 0, "resources"}, "null"},
      {{Scope::kContainer, "initContainers", 1, "resources"}, "{requests: {memory: 1Gi}}"},
      {{Scope::kContainer, "initContainers", 0, "env"}, "[{name: ALPHA}, {name: BETA, value: z}]"},
      {{Scope::kContainer, "containers", 0, "volumeMounts"}, "[{name: dshm, mountPath: /dev/shm}]"},
      {{Scope::kSpec, {}, 0, "tolerations"}, "[{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]"},
      {{Scope::kSpec, {}, 0, "tolerations"}, "[]"},
      {{Scope::kSpec, {}, 0, "affinity"},
       "{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
       "[{matchExpressions: [{key: gpu, operator: In, values: [a100]}]}]}}}"},
      {{Scope::kSpec, {}, 0, "affinity"}, "null"},
      {{Scope::kSpec, {}, 0, "volumes"}, "[{name: dshm, emptyDir: {medium: Memory, sizeLimit: 8Gi}}]"},
      {{Scope::kSpec, {}, 0, "nodeSelector"}, "{pool: a100, zone: b}"},
      {{Scope::kSpec, {}, 0, "resources"}, "{limits: {cpu: 4, memory: 8Gi}}"},
      {{Scope::kMetadata, {}, 0, "annotations"}, "{a: \"1\", gpuadmit.io/mutated-by: shm-size}"},
      {{Scope::kMetadata, {}, 0, "labels"}, "{}"},
  }));
  CAPTURE(part.array, part.index, part.member, value_yaml);
  auto [pod, value, whole] = edit_base(part, value_yaml);
  REQUIRE(whole.ok());

  REQUIRE(gpuadmit::k8s::parse_pod_part(part, value, pod).ok());
  CHECK(pod == *whole);
}

TEST_CASE("a part with a wrong value is the error parsing the whole pod gives", "[pod]") {
  auto [part, value_yaml] = GENERATE(table<PodPart, std::string>({
      {{Scope::kContainer, "containers", 0, "resources"}, "{limits: {cpu: lots}}"},
      {{Scope::kContainer, "initContainers", 1, "resources"}, "[1]"},
      {{Scope::kContainer, "containers", 0, "env"}, "[{name: 1}]"},
      {{Scope::kContainer, "containers", 0, "volumeMounts"}, "{name: x}"},
      {{Scope::kSpec, {}, 0, "tolerations"}, "[{key: k, tolerationSeconds: soon}]"},
      {{Scope::kSpec, {}, 0, "affinity"}, "{nodeAffinity: []}"},
      {{Scope::kSpec, {}, 0, "volumes"}, "[{name: v, emptyDir: {sizeLimit: big}}]"},
      {{Scope::kSpec, {}, 0, "nodeSelector"}, "{pool: 1}"},
      {{Scope::kMetadata, {}, 0, "annotations"}, "{a: [1]}"},
  }));
  CAPTURE(part.array, part.index, part.member, value_yaml);
  auto [pod, value, whole] = edit_base(part, value_yaml);
  REQUIRE_FALSE(whole.ok());

  auto read = gpuadmit::k8s::parse_pod_part(part, value, pod);
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message == whole.error().message);
}

TEST_CASE("a part gpuadmit does not read back, or of a container the pod lacks, is an internal error",
          "[pod]") {
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml(kPartsBase));
  REQUIRE(pod.ok());
  const auto unknown = gpuadmit::k8s::parse_pod_part({Scope::kSpec, {}, 0, "hostNetwork"}, true, *pod);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message ==
        "internal: spec.hostNetwork is not a part of a pod that gpuadmit reads back");
  const auto missing =
      gpuadmit::k8s::parse_pod_part({Scope::kContainer, "containers", 3, "resources"}, nullptr, *pod);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "internal: the pod has no spec.containers[3]");
}
