// gpu-intent: a pod that says GPU (image, labels) but asks for none. The GPU stack's own pods (the device
// plugin, the GPU operator, DCGM exporter) run CUDA images and hold no GPU on purpose: a GPU given to a
// DaemonSet takes one on every node, and the device plugin given one can never schedule.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "gpuadmit/policy/gpu_share.hpp"
#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::Action;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::check;
using gpuadmit::test::warnings_text;
using nlohmann::json;

const std::string kEnforce = "    gpu-intent: {action: enforce}\n";

json device_plugin_pod(const std::string& owner_kind) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata:
  name: nvidia-device-plugin-daemonset-x7k2p
  namespace: ml-team
  ownerReferences:
    - {apiVersion: apps/v1, kind: )" +
                              owner_kind +
                              R"(, name: nvidia-device-plugin-daemonset, uid: 3f0c, controller: true}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: nvidia-device-plugin-ctr
      image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
)");
}

}  // namespace

TEST_CASE("gpu-intent under enforce gives no GPU to a DaemonSet's pod", "[gpu-intent]") {
  const auto r = check(device_plugin_pod("DaemonSet"), gpuadmit::test::policy_with(kEnforce), nullptr);
  CHECK(r.allowed);
  CHECK(r.patch.empty());
  CHECK(r.violations.empty());
}

TEST_CASE("gpu-intent under enforce still fixes a GPU image that a ReplicaSet runs", "[gpu-intent]") {
  const auto r = check(device_plugin_pod("ReplicaSet"), gpuadmit::test::policy_with(kEnforce), nullptr);
  CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
}

TEST_CASE("gpu-intent under enforce gives no GPU to a DaemonSet's pod template", "[gpu-intent]") {
  const json daemon_set = gpuadmit::test::yaml(R"(apiVersion: apps/v1
kind: DaemonSet
metadata: {name: nvidia-dcgm-exporter, namespace: ml-team}
spec:
  selector: {matchLabels: {app: dcgm-exporter}}
  template:
    metadata: {labels: {app: dcgm-exporter}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
        - name: exporter
          image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
)");
  const auto r = check(daemon_set, gpuadmit::test::policy_with(kEnforce), nullptr);
  CHECK(r.allowed);
  CHECK(r.patch.empty());
}

TEST_CASE("gpu-intent in enforce mode adds one GPU to the container that runs a GPU image",
          "[rules][gpu-intent]") {
  RuleSet rules;
  rules.gpu_intent.action = Action::kEnforce;
  const auto r = check(gpuadmit::test::fixture("pods/resnet50-no-gpu.yaml"), rules);
  CHECK(r.fixed["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  CHECK(r.fixed["spec"]["tolerations"].size() == 1);  // it is a GPU pod now, so it gets the toleration too
}

TEST_CASE("gpu-intent recognises the label that says GPU", "[rules][gpu-intent]") {
  const auto r = check(gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {gpu-training: "true"}}
spec: {containers: [{name: a, image: mycorp/trainer:1}]}
)"));
  CHECK_THAT(warnings_text(r), Catch::Contains("is in a pod labelled gpu-training=true but requests no GPU"));
}

TEST_CASE("a CUDA pod with a shared GPU or a GPU share is not told it requests no GPU",
          "[rules][gpu-intent][gpu-share]") {
  // name, the container's limits; under enforce, nothing is added either.
  const auto [name, limits] = GENERATE(table<std::string, std::string>({
      {"time-slicing with renameByDefault", "{nvidia.com/gpu.shared: 1}"},
      {"Volcano's vGPU count", "{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000}"},
      {"Volcano's older GPU share alone", "{volcano.sh/gpu-memory: 1024}"},
      {"HAMi's memory share alone", "{nvidia.com/gpumem: 3000}"},
  }));
  CAPTURE(name);
  const json pod = gpuadmit::test::yaml(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec: {containers: [{name: a, image: nvcr.io/nvidia/pytorch:24.01-py3, resources: {limits: )" +
                                        limits + R"(}}]}
)");
  const auto warned = check(pod);
  CHECK_THAT(warnings_text(warned), !Catch::Contains("requests no GPU"));
  const auto enforced = check(pod, gpuadmit::test::policy_with(kEnforce), nullptr);
  CHECK_FALSE(enforced.fixed["spec"]["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));
}

TEST_CASE("a share resource is never counted as GPUs", "[rules][gpu-share]") {
  const gpuadmit::policy::RuleSet rules;
  for (const std::string share : {"nvidia.com/gpumem", "nvidia.com/gpumem-percentage", "nvidia.com/gpucores",
                                  "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores", "volcano.sh/gpu-memory",
                                  "aliyun.com/gpu-mem", "metax-tech.com/vcore", "metax-tech.com/vmemory"}) {
    CAPTURE(share);
    CHECK(gpuadmit::policy::is_gpu_share_resource(share));
    CHECK_FALSE(rules.is_gpu_resource(share));
  }
  for (const std::string gpu : {"nvidia.com/gpu", "nvidia.com/gpu.shared", "volcano.sh/vgpu-number"}) {
    CAPTURE(gpu);
    CHECK(rules.is_gpu_resource(gpu));
    CHECK_FALSE(gpuadmit::policy::is_gpu_share_resource(gpu));
  }
}

TEST_CASE(
    "the default policy counts every vendor's GPU device-plugin name as a GPU, and not what only "
    "looks like one",
    "[rules]") {
  // docs/policy.md, "GPU resource names": where each name comes from, and why the others are not GPUs.
  const gpuadmit::policy::RuleSet rules;
  const std::vector<std::pair<std::string, bool>> cases{
      {"nvidia.com/gpu", true},
      {"nvidia.com/mig-3g.40gb", true},
      {"amd.com/gpu", true},
      {"gpu.intel.com/i915", true},
      {"gpu.intel.com/xe", true},  // Intel's device plugin on the xe kernel driver
      {"intel.com/gpu", true},     // Intel's DRA driver: DeviceClass gpu.intel.com's extendedResourceName
      {"habana.ai/gaudi", true},
      {"metax-tech.com/gpu", true},  // MetaX's device plugin
      {"hygon.com/dcunum", true},    // Hygon DCUs, by HAMi's count
      {"iluvatar.ai/vgpu", true},    // Iluvatar GPUs, by HAMi's count
      {"mthreads.com/vgpu", true},
      {"birentech.com/gpu", true},               // Moore Threads GPUs, by HAMi's count
      {"gpu.intel.com/i915_monitoring", false},  // every GPU of the node, read-only, for a monitoring agent
      {"gpu.intel.com/xe_monitoring", false},
      {"gpu.intel.com/millicores", false},  // GPU Aware Scheduling's shares
      {"gpu.intel.com/memory.max", false},
      {"gpu.intel.com/tiles", false},
      {"google.com/tpu", false},  // accelerators that are not GPUs: no CUDA, no GPU memory table
      {"aws.amazon.com/neuroncore", false},
      {"huawei.com/Ascend910", false},
  };
  for (const auto& [name, gpu] : cases) {
    CAPTURE(name);
    CHECK(rules.is_gpu_resource(name) == gpu);
  }
}

TEST_CASE("gpu-intent tells the CPU part of a GPU workload nothing, and a lone CPU template still",
          "[gpu-intent]") {
  // A Ray head runs the workers' CUDA image on CPU by design: a GPU given to it would sit idle. Told apart
  // by its siblings: another template of the same workload asks for GPUs.
  const auto ray = [](const std::string& worker_resources) {
    return gpuadmit::test::yaml(R"(apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: ml-team}
spec:
  headGroupSpec:
    template:
      spec:
        containers: [{name: ray-head, image: rayproject/ray-ml:2.9.0-py310-cu121-cuda,
                      resources: {limits: {cpu: "2", memory: 8Gi}}}]
  workerGroupSpecs:
    - groupName: gpu
      replicas: 1
      template:
        spec:
          containers: [{name: ray-worker, image: rayproject/ray-ml:2.9.0-py310-cu121-cuda,
                        resources: {limits: )" +
                                worker_resources + "}}]\n");
  };
  for (const char* policy : {"", "enforce"}) {
    CAPTURE(policy);
    const auto rules = gpuadmit::test::policy_with(std::string(policy).empty() ? "" : kEnforce);
    const auto with_gpu_workers = check(ray("{cpu: \"4\", memory: 16Gi, nvidia.com/gpu: 1}"), rules, nullptr);
    CHECK(gpuadmit::test::all_text(with_gpu_workers).find("gpu-intent") == std::string::npos);
    CHECK_FALSE(
        with_gpu_workers
            .fixed["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
            .contains("nvidia.com/gpu"));
    // No template asks for a GPU: the CUDA image is said of the head as of the workers.
    const auto without = check(ray("{cpu: \"4\", memory: 16Gi}"), rules, nullptr);
    CHECK_THAT(gpuadmit::test::all_text(without) + gpuadmit::test::warnings_text(without),
               Catch::Contains("ray-head"));
  }
}

TEST_CASE("gpu-intent gives no whole GPU to a pod KAI Scheduler shares a GPU with by annotation",
          "[gpu-intent][gpu-share]") {
  // NVIDIA/KAI-Scheduler docs/gpu-sharing: gpu-fraction "0.5", gpu-memory "2000"; its webhook rejects a pod
  // that also asks for nvidia.com/gpu, so an added GPU would break a working pod.
  const auto annotation = GENERATE(as<std::string>{}, "gpu-fraction: \"0.5\"", "gpu-memory: \"2000\"");
  CAPTURE(annotation);
  const json pod = gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata:
  name: gpu-sharing
  namespace: ml-team
  annotations: {)" + annotation + R"(}
spec:
  schedulerName: kai-scheduler
  containers: [{name: gpu-workload, image: "nvidia/cuda:13.0.2-base-ubi8", command: [nvidia-smi]}]
)");
  const auto r = check(pod, gpuadmit::test::policy_with(kEnforce), nullptr);
  CHECK(r.allowed);
  CHECK(r.patch.empty());
  CHECK(gpuadmit::test::all_text(r).find("gpu-intent") == std::string::npos);
}
