// gpu-quota: the namespace's GPU headroom against every pod a workload runs at once. Only the
// ResourceQuotas whose scopes match the pod count, and a quota on cpu or memory refuses pods whose
// containers leave that resource out ("must specify").
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "support/fixtures.hpp"
#include "support/policy_checks.hpp"

namespace {

using gpuadmit::policy::Mode;
using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::run;
using gpuadmit::test::view_of;
using nlohmann::json;

// A GPU pod in ml-team; `spec_extra` goes into its spec, `resources` is its container's resources.
json quota_pod(const std::string& spec_extra, const std::string& resources) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
)" + spec_extra + R"(
  containers:
    - name: main
      image: busybox
      resources: )" + resources +
                              "\n");
}

const std::string kGuaranteed = "{limits: {cpu: '4', memory: 64Gi, nvidia.com/gpu: 1}}";

// gpu-quota's full messages for the pod (warnings and denials of the mutating evaluation).
std::string quota_messages(const json& object, const gpuadmit::policy::RuleSet& rules,
                           const gpuadmit::policy::ClusterView& view) {
  std::string out;
  std::istringstream lines(gpuadmit::test::messages(object, rules, &view));
  bool in_quota = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("[")) in_quota = line.starts_with("[gpu-quota]");
    if (in_quota) out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("gpu-quota counts a pod only against the quotas whose scopes match it", "[gpu-quota]") {
  auto [spec_extra, resources, expected] = GENERATE(table<std::string, std::string, std::string>({
      {"  priorityClassName: ml-low", kGuaranteed, "ResourceQuota ml-low-gpus"},
      {"  priorityClassName: ml-high", kGuaranteed, ""},
      {"", kGuaranteed, ""},
      {"  activeDeadlineSeconds: 3600", kGuaranteed, "ResourceQuota no-deadline-gpus"},
  }));
  CAPTURE(spec_extra, resources);
  const auto view = view_of("scoped-quotas");
  const std::string text =
      quota_messages(quota_pod(spec_extra, resources), gpuadmit::test::policy_with(""), view);
  if (expected.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(expected));
  }
}

TEST_CASE("gpu-quota says a BestEffort GPU pod is refused by a BestEffort pods quota", "[gpu-quota]") {
  const auto view = view_of("scoped-quotas");
  const auto rules = gpuadmit::test::policy_with("    guaranteed-qos: {action: off}\n");
  CHECK_THAT(quota_messages(quota_pod("", "{limits: {nvidia.com/gpu: 1}}"), rules, view),
             Catch::Contains("0 of 0 pods left (ResourceQuota no-best-effort)"));
}

TEST_CASE("gpu-quota names the containers that leave out a resource a matching quota constrains",
          "[gpu-quota]") {
  const auto view = view_of("scoped-quotas");
  const auto rules = gpuadmit::test::policy_with("    guaranteed-qos: {action: off}\n");
  const std::string text =
      quota_messages(quota_pod("", "{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}"), rules, view);
  CHECK_THAT(text,
             Catch::Contains("ResourceQuota memory-limits in namespace ml-team constrains limits.memory") &&
                 Catch::Contains("must specify limits.memory for: main"));
  const auto enforced = check(quota_pod("", "{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}"),
                              gpuadmit::test::policy_with("    guaranteed-qos: {action: off}\n"
                                                          "    gpu-quota: {action: enforce}\n"),
                              &view);
  REQUIRE_FALSE(enforced.allowed);
  CHECK_THAT(enforced.violations.at(0).message,
             Catch::Contains("must specify limits.memory for: main") &&
                 Catch::Contains("Fix: set resources.limits.memory on container(s) main"));
}

TEST_CASE("gpu-quota is silent when every container sets what the quota constrains", "[gpu-quota]") {
  const auto view = view_of("scoped-quotas");
  CHECK(quota_messages(quota_pod("", kGuaranteed), gpuadmit::test::policy_with(""), view).empty());
}

TEST_CASE("gpu-quota warns with the namespace's headroom", "[cluster][quota][gpu-quota]") {
  const auto r = check(gpu_pod("4"), gpu_cluster_view());
  CHECK_THAT(all_text(r),
             Catch::Contains(
                 "ResourceQuota gpu-quota has 2 of 8 requests.nvidia.com/gpu left; this pod asks for 4"));
}

TEST_CASE("gpu-quota counts every pod a workload runs at once", "[workloads][quota][gpu-quota]") {
  auto snapshot = gpuadmit::policy::snapshot_from_list(gpuadmit::test::fixture("cluster/gpu-cluster.yaml"));
  REQUIRE(snapshot.ok());
  const gpuadmit::policy::ClusterView view{
      std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot)), false, 0};
  auto [replicas, warned] = GENERATE(table<int, bool>({{1, false}, {2, false}, {3, true}}));
  CAPTURE(replicas);
  json object = gpuadmit::test::fixture("workloads/deployment.yaml");  // 1 GPU per pod; the quota has 2 left
  object["spec"]["replicas"] = replicas;
  const auto decision = run(object, Mode::kValidate, gpuadmit::policy::RuleSet{}, &view);
  const bool quota_warning = std::any_of(decision.warnings.begin(), decision.warnings.end(),
                                         [](const auto& f) { return f.rule == "gpu-quota"; });
  CHECK(quota_warning == warned);
  if (warned) {
    const auto f = std::find_if(decision.warnings.begin(), decision.warnings.end(),
                                [](const auto& w) { return w.rule == "gpu-quota"; });
    REQUIRE(f != decision.warnings.end());
    CHECK_THAT(f->summary, Catch::Contains("its 3 pods ask for 3"));
  }
}

TEST_CASE("gpu-quota judges a pod that holds a GPU share nodes advertise, as the quota does",
          "[gpu-quota][gpu-share]") {
  // AliyunContainerService/gpushare-scheduler-extender samples/2.yaml (aliyun.com/gpu-mem: 2, nothing else):
  // a BestEffort pod on a GPU, refused by the namespace's quotas like any other.
  const auto view = view_of("scoped-quotas");
  const std::string text = quota_messages(quota_pod("", "{limits: {aliyun.com/gpu-mem: 2}}"),
                                          gpuadmit::test::policy_with(""), view);
  CHECK_THAT(text, Catch::Contains("0 of 0 pods left (ResourceQuota no-best-effort)"));
}
