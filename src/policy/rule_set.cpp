#include "gpuadmit/policy/rule_set.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "gpuadmit/policy/catalogue.hpp"
#include "gpuadmit/policy/text.hpp"

namespace gpuadmit::policy {

std::string_view to_string(Action action) noexcept {
  switch (action) {
    case Action::kOff:
      return "off";
    case Action::kAudit:
      return "audit";
    case Action::kWarn:
      return "warn";
    case Action::kEnforce:
      return "enforce";
  }
  return "off";
}

std::string_view to_string(QosStrategy strategy) noexcept {
  switch (strategy) {
    case QosStrategy::kRaiseRequests:
      return "raise-requests";
    case QosStrategy::kLowerLimits:
      return "lower-limits";
    case QosStrategy::kDeny:
      return "deny";
  }
  return "raise-requests";
}

std::string_view to_string(OnStale on_stale) noexcept {
  switch (on_stale) {
    case OnStale::kWarn:
      return "warn";
    case OnStale::kEnforce:
      return "enforce";
    case OnStale::kSkip:
      return "skip";
  }
  return "warn";
}

bool RuleSet::is_gpu_resource(std::string_view name) const noexcept {
  // KEP-5004: every DeviceClass is requestable as deviceclass.resource.kubernetes.io/<class>, a GPU when
  // the class is one of dra-claims' GPU device classes.
  constexpr std::string_view kImplicit = "deviceclass.resource.kubernetes.io/";
  if (name.starts_with(kImplicit)) {
    const std::string_view cls = name.substr(kImplicit.size());
    return std::any_of(dra_claims.gpu_device_classes.begin(), dra_claims.gpu_device_classes.end(),
                       [&](const std::string& pattern) { return glob_match(pattern, cls); });
  }
  for (const std::string& pattern : gpu_resources) {
    if (pattern.empty()) {
      if (name.empty()) return true;
      continue;
    }
    // Rules ask this of every resource name (cpu, memory, ...): the first byte rejects most at once.
    if (pattern.front() != '*' && (name.empty() || name.front() != pattern.front())) continue;
    if (pattern.back() == '*') {
      if (name.substr(0, pattern.size() - 1) == std::string_view(pattern).substr(0, pattern.size() - 1)) {
        return true;
      }
    } else if (name == pattern) {
      return true;
    }
  }
  return false;
}

bool RuleSet::is_excluded(std::string_view ns) const noexcept {
  return std::find(excluded_namespaces.begin(), excluded_namespaces.end(), ns) != excluded_namespaces.end();
}

Action RuleSet::action_of(std::string_view rule_id) const noexcept {
  const RuleEntry* rule = find_rule(rule_id);
  return rule != nullptr ? rule->action(*this) : Action::kOff;
}

const WorkloadKind* RuleSet::workload_of(std::string_view api_group, std::string_view kind) const noexcept {
  for (const WorkloadKind& w : workloads) {
    if (w.api_group == api_group && std::find(w.kinds.begin(), w.kinds.end(), kind) != w.kinds.end())
      return &w;
  }
  return nullptr;
}

std::string_view api_group(std::string_view api_version) noexcept {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view() : api_version.substr(0, slash);
}

namespace {

WorkloadPod pod(std::string_view path, std::string_view count = {}, std::string name = {}) {
  WorkloadPod p;
  p.name = std::move(name);
  p.path = workload_path(path);
  if (!count.empty()) p.replicas.count = factor(count);
  return p;
}

// KubeRay's GetWorkerGroupDesiredReplicas: replicas (minReplicas when absent) within [minReplicas,
// maxReplicas], times numOfHosts.
WorkloadPod ray_workers(std::string_view path) {
  WorkloadPod p = pod(path, "replicas");
  p.replicas.absent = 0;
  p.replicas.min = factor("minReplicas").ref;
  p.replicas.max = factor("maxReplicas").ref;
  p.replicas.times = {factor("numOfHosts")};
  return p;
}

WorkloadPod runtime_pod(std::string name, std::string_view path, std::string_view count,
                        const std::vector<std::string>& containers = {}) {
  WorkloadPod p = pod(path, count, std::move(name));
  p.pod_spec = true;
  p.partial = true;
  for (const std::string& member : containers) p.containers.push_back(FieldRef{false, {member}});
  return p;
}

// KServe multi-node serving: pipelineParallelSize - 1 workers beside each predictor pod.
WorkloadPod kserve_workers() {
  WorkloadPod p = runtime_pod("worker", "spec.predictor.workerSpec", "$.spec.predictor.minReplicas");
  p.replicas.times = {factor("workerSpec.pipelineParallelSize - 1")};
  return p;
}

std::vector<FieldRef> refs(std::initializer_list<std::string_view> texts) {
  std::vector<FieldRef> out;
  for (std::string_view t : texts) out.push_back(field_ref(t));
  return out;
}

// An Argo template runs one pod: its container (or script, or containerSet) with the template's
// tolerations, node selector and affinity, else the templateDefaults', else the workflow's
// (workflow/controller/workflowpod.go); its labels over the workflow's podMetadata.
WorkloadPod argo_templates(const std::string& spec, std::string_view count) {
  WorkloadPod p = pod(spec + ".templates[name=*]", count);
  p.pod_spec = true;
  p.containers = refs({"container", "script", "containerSet.containers", "sidecars"});
  p.fields = {field_ref("@"), field_ref("$." + spec + ".templateDefaults"), field_ref("$." + spec)};
  p.metadata = {field_ref("metadata"), field_ref("$." + spec + ".templateDefaults.metadata"),
                field_ref("$." + spec + ".podMetadata")};
  // A podSpecPatch is applied after admission; templateDefaults' container or script are merged into the
  // template's; a containerSet's own volumeMounts into each of its containers.
  p.partial_if = {field_ref("podSpecPatch"),
                  field_ref("containerSet.volumeMounts"),
                  field_ref("$." + spec + ".podSpecPatch"),
                  field_ref("$." + spec + ".templateDefaults.podSpecPatch"),
                  field_ref("$." + spec + ".templateDefaults.container"),
                  field_ref("$." + spec + ".templateDefaults.script")};
  return p;
}

// A Tekton task's steps and sidecars keep their requests in computeResources; the run's podTemplate holds
// the pod's tolerations, node selector, affinity and volumes, merged with the task's volumes.
WorkloadPod tekton_task(std::string_view path, std::string_view pod_template, bool partial) {
  WorkloadPod p = pod(path);
  p.pod_spec = true;
  p.containers = refs({"steps", "sidecars"});
  p.resources = "computeResources";
  p.fields = {field_ref(pod_template), field_ref("@")};
  p.metadata = partial ? refs({"metadata", "$.metadata"}) : refs({"$.metadata"});
  p.partial = partial;
  if (!partial)
    p.partial_if = refs({"stepTemplate.computeResources", "$.spec.computeResources", "$.spec.stepSpecs",
                         "$.spec.sidecarSpecs"});
  return p;
}

// A pod made from one container-like object by an operator that adds the rest (a TrainJob's trainer, a
// NIMService's spec): its resources are judged, the pod is partial.
WorkloadPod operator_pod(std::string_view path, std::string_view count, std::string resources) {
  WorkloadPod p = pod(path, count);
  p.pod_spec = true;
  p.partial = true;
  p.containers = refs({"@"});
  p.resources = std::move(resources);
  return p;
}

std::vector<WorkloadPod> ray_cluster(const std::string& prefix) {
  return {pod(prefix + "headGroupSpec.template", {}, "head"),
          ray_workers(prefix + "workerGroupSpecs[groupName=*].template")};
}

}  // namespace

// Kubernetes' own controllers, the Kubeflow training operator (v1 replica specs, MPIJob v2 too), Kubeflow
// Notebooks and Trainer v2 runtimes, KubeRay, LeaderWorkerSet, JobSet and Volcano:
// src/config/default_policy.yaml says the same, and a test holds the two equal.
std::vector<WorkloadKind> default_workload_kinds() {
  std::vector<WorkloadPod> ray_job = ray_cluster("spec.rayClusterSpec.");
  ray_job.push_back(pod("spec.submitterPodTemplate", {}, "submitter"));
  WorkloadPod lws_workers = pod("spec.leaderWorkerTemplate.workerTemplate", "$.spec.replicas", "workers");
  lws_workers.replicas.times = {factor("$.spec.leaderWorkerTemplate.size - 1")};
  WorkloadPod volcano_tasks = pod("spec.tasks[name=*].template", "replicas");
  volcano_tasks.replicas.absent = 0;  // a task without replicas runs no pod
  WorkloadPod jobset = pod("spec.replicatedJobs[name=*].template.spec.template", "replicas");
  jobset.replicas.times = {factor("template.spec.parallelism")};
  return {
      {"apps", {"Deployment", "StatefulSet", "ReplicaSet"}, {pod("spec.template", "replicas")}},
      {"apps", {"DaemonSet"}, {pod("spec.template")}},
      {"batch", {"Job"}, {pod("spec.template", "parallelism")}},
      {"batch", {"CronJob"}, {pod("spec.jobTemplate.spec.template", "parallelism")}},
      {"kubeflow.org",
       {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"},
       {pod("spec.*ReplicaSpecs.*.template", "replicas")}},
      {"kubeflow.org", {"Notebook"}, {pod("spec.template")}},
      {"ray.io", {"RayCluster"}, ray_cluster("spec.")},
      {"ray.io", {"RayJob"}, std::move(ray_job)},
      {"ray.io", {"RayService"}, ray_cluster("spec.rayClusterConfig.")},
      {"leaderworkerset.x-k8s.io",
       {"LeaderWorkerSet"},
       {pod("spec.leaderWorkerTemplate.leaderTemplate", "$.spec.replicas", "leader"),
        std::move(lws_workers)}},
      {"jobset.x-k8s.io", {"JobSet"}, {std::move(jobset)}},
      {"trainer.kubeflow.org",
       {"TrainingRuntime", "ClusterTrainingRuntime"},
       {pod("spec.template.spec.replicatedJobs[name=*].template.spec.template", "0")}},
      {"serving.kserve.io",
       {"InferenceService"},
       {runtime_pod("predictor", "spec.predictor", "minReplicas",
                    {"model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx", "huggingface",
                     "pmml", "lightgbm", "paddle"}),
        kserve_workers(), runtime_pod("transformer", "spec.transformer", "minReplicas"),
        runtime_pod("explainer", "spec.explainer", "minReplicas", {"art"})}},
      {"serving.kserve.io", {"ServingRuntime", "ClusterServingRuntime"}, {runtime_pod("", "spec", "0")}},
      {"serving.kserve.io",
       {"LLMInferenceService"},
       {runtime_pod("template", "spec.template", "$.spec.replicas"),
        runtime_pod("worker", "spec.worker", "$.spec.replicas"),
        runtime_pod("prefill", "spec.prefill.template", "$.spec.prefill.replicas"),
        runtime_pod("prefill-worker", "spec.prefill.worker", "$.spec.prefill.replicas")}},
      {"batch.volcano.sh", {"Job"}, {volcano_tasks}},
      {"argoproj.io", {"Workflow"}, {argo_templates("spec", {})}, false},
      {"argoproj.io", {"WorkflowTemplate", "ClusterWorkflowTemplate"}, {argo_templates("spec", "0")}, false},
      {"argoproj.io", {"CronWorkflow"}, {argo_templates("spec.workflowSpec", "0")}, false},
      {"tekton.dev", {"TaskRun"}, {tekton_task("spec.taskSpec", "$.spec.podTemplate", false)}, false},
      {"tekton.dev",
       {"PipelineRun"},
       {tekton_task("spec.pipelineSpec.tasks[name=*].taskSpec", "$.spec.taskRunTemplate.podTemplate", true),
        tekton_task("spec.pipelineSpec.finally[name=*].taskSpec", "$.spec.taskRunTemplate.podTemplate",
                    true)},
       false},
      {"trainer.kubeflow.org",
       {"TrainJob"},
       {operator_pod("spec.trainer", "$.spec.trainer.numNodes", "resourcesPerNode")}},
      {"apps.nvidia.com", {"NIMService"}, {operator_pod("spec", "$.spec.replicas", "resources")}},
  };
}

}  // namespace gpuadmit::policy

namespace gpuadmit::policy {

// Only releases whose CUDA a primary source states, each read there: NVIDIA's release notes ("Release 25.12
// is based on CUDA 13.1.0") for NGC containers, and for vllm/vllm-openai the CUDA_VERSION its release
// pipeline builds the image with, at that tag. docs/image-cuda-sources.md names the source of every row; a
// policy adds the releases its clusters run. src/config/default_policy.yaml lists the same.
namespace {
constexpr std::array<std::pair<std::string_view, std::string_view>, 73> kImageCuda{{
    {"*vllm/vllm-openai:v0.10.*", "12.8"},
    {"*vllm/vllm-openai:v0.11.0*", "12.8"},
    {"*vllm/vllm-openai:v0.11.1*", "12.9"},
    {"*vllm/vllm-openai:v0.11.2*", "12.9"},
    {"*vllm/vllm-openai:v0.12.*", "12.9"},
    {"*vllm/vllm-openai:v0.13.*", "12.9"},
    {"*vllm/vllm-openai:v0.14.*", "12.9"},
    {"*vllm/vllm-openai:v0.16.*", "12.9"},
    {"*vllm/vllm-openai:v0.17.*", "12.9"},
    {"*vllm/vllm-openai:v0.18.*", "12.9"},
    {"*vllm/vllm-openai:v0.19.*", "12.9"},
    {"*vllm/vllm-openai:v0.2*-cu129*", "12.9"},
    {"*vllm/vllm-openai:v0.20.*", "13.0"},
    {"*vllm/vllm-openai:v0.21.*", "13.0"},
    {"*vllm/vllm-openai:v0.22.*", "13.0"},
    {"*vllm/vllm-openai:v0.23.*", "13.0"},
    {"*vllm/vllm-openai:v0.24.*", "13.0"},
    {"*vllm/vllm-openai:v0.25.*", "13.0"},
    {"*vllm/vllm-openai:v0.26.*", "13.0"},
    {"*vllm/vllm-openai:v0.27.*", "13.0"},
    {"*vllm/vllm-openai:v0.28.*", "13.0"},
    {"*vllm/vllm-openai:v0.29.*", "13.0"},
    {"*vllm/vllm-openai:v0.3*-cu129*", "12.9"},
    {"*vllm/vllm-openai:v0.30.*", "13.0"},
    {"*vllm/vllm-openai:v0.31.*", "13.0"},
    {"*vllm/vllm-openai:v0.32.*", "13.0"},
    {"*vllm/vllm-openai:v0.33.*", "13.0"},
    {"*vllm/vllm-openai:v0.34.*", "13.0"},
    {"*vllm/vllm-openai:v0.6.2*", "12.4"},
    {"*vllm/vllm-openai:v0.6.3*", "12.4"},
    {"*vllm/vllm-openai:v0.6.4*", "12.4"},
    {"*vllm/vllm-openai:v0.6.5*", "12.1"},
    {"*vllm/vllm-openai:v0.6.6*", "12.1"},
    {"*vllm/vllm-openai:v0.7.*", "12.1"},
    {"*vllm/vllm-openai:v0.8.*", "12.4"},
    {"*vllm/vllm-openai:v0.9.*", "12.8"},
    {"nvcr.io/nvidia/pytorch:25.12-*", "13.1"},
    {"nvcr.io/nvidia/tensorflow:23.01-*", "12.0"},
    {"nvcr.io/nvidia/tritonserver:23.03-*", "12.1"},
    {"nvcr.io/nvidia/tritonserver:23.04-*", "12.1"},
    {"nvcr.io/nvidia/tritonserver:23.05-*", "12.1"},
    {"nvcr.io/nvidia/tritonserver:23.06-*", "12.1"},
    {"nvcr.io/nvidia/tritonserver:23.07-*", "12.1"},
    {"nvcr.io/nvidia/tritonserver:23.08-*", "12.2"},
    {"nvcr.io/nvidia/tritonserver:23.09-*", "12.2"},
    {"nvcr.io/nvidia/tritonserver:23.10-*", "12.2"},
    {"nvcr.io/nvidia/tritonserver:23.11-*", "12.3"},
    {"nvcr.io/nvidia/tritonserver:23.12-*", "12.3"},
    {"nvcr.io/nvidia/tritonserver:24.01-*", "12.3"},
    {"nvcr.io/nvidia/tritonserver:24.02-*", "12.3"},
    {"nvcr.io/nvidia/tritonserver:24.03-*", "12.4"},
    {"nvcr.io/nvidia/tritonserver:24.04-*", "12.4"},
    {"nvcr.io/nvidia/tritonserver:24.05-*", "12.4"},
    {"nvcr.io/nvidia/tritonserver:24.06-*", "12.5"},
    {"nvcr.io/nvidia/tritonserver:24.07-*", "12.5"},
    {"nvcr.io/nvidia/tritonserver:24.08-*", "12.6"},
    {"nvcr.io/nvidia/tritonserver:24.10-*", "12.6"},
    {"nvcr.io/nvidia/tritonserver:24.12-*", "12.6"},
    {"nvcr.io/nvidia/tritonserver:25.01-*", "12.8"},
    {"nvcr.io/nvidia/tritonserver:25.02-*", "12.8"},
    {"nvcr.io/nvidia/tritonserver:25.03-*", "12.8"},
    {"nvcr.io/nvidia/tritonserver:25.04-*", "12.9"},
    {"nvcr.io/nvidia/tritonserver:25.06-*", "12.9"},
    {"nvcr.io/nvidia/tritonserver:25.08-*", "13.0"},
    {"nvcr.io/nvidia/tritonserver:25.10-*", "13.0"},
    {"nvcr.io/nvidia/tritonserver:25.12-*", "13.1"},
    {"nvcr.io/nvidia/tritonserver:26.02-*", "13.1"},
    {"nvcr.io/nvidia/tritonserver:26.04-*", "13.2"},
    {"nvcr.io/nvidia/tritonserver:26.06-*", "13.3"},
    {"nvcr.io/nvidia/tritonserver:26.07-*", "13.3"},
    {"nvcr.io/nvidia/tritonserver:26.08-*", "13.4"},
    {"nvcr.io/nvidia/tritonserver:26.09-*", "13.4"},
    {"nvcr.io/nvidia/tritonserver:26.10-*", "13.4"},
}};
}  // namespace

k8s::StringMap default_image_cuda() {
  k8s::StringMap out;
  for (const auto& [pattern, cuda] : kImageCuda) out.try_emplace(pattern, cuda);
  return out;
}

}  // namespace gpuadmit::policy
