// gpu-quota: only the ResourceQuotas whose scopes match the pod count, and a quota on cpu or memory
// refuses pods whose containers leave that resource out ("must specify").
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::check;
using gpuadmit::test::view_of;
using nlohmann::json;

// A GPU pod in ml-team; `spec_extra` goes into its spec, `resources` is its container's resources.
json pod(const std::string& spec_extra, const std::string& resources) {
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
  const std::string text = quota_messages(pod(spec_extra, resources), gpuadmit::test::policy_with(""), view);
  if (expected.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(expected));
  }
}

TEST_CASE("gpu-quota says a BestEffort GPU pod is refused by a BestEffort pods quota", "[gpu-quota]") {
  const auto view = view_of("scoped-quotas");
  const auto rules = gpuadmit::test::policy_with("    guaranteed-qos: {action: off}\n");
  CHECK_THAT(quota_messages(pod("", "{limits: {nvidia.com/gpu: 1}}"), rules, view),
             Catch::Contains("0 of 0 pods left (ResourceQuota no-best-effort)"));
}

TEST_CASE("gpu-quota names the containers that leave out a resource a matching quota constrains",
          "[gpu-quota]") {
  const auto view = view_of("scoped-quotas");
  const auto rules = gpuadmit::test::policy_with("    guaranteed-qos: {action: off}\n");
  const std::string text =
      quota_messages(pod("", "{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}"), rules, view);
  CHECK_THAT(text,
             Catch::Contains("ResourceQuota memory-limits in namespace ml-team constrains limits.memory") &&
                 Catch::Contains("must specify limits.memory for: main"));
  const auto enforced = check(pod("", "{requests: {cpu: '2'}, limits: {nvidia.com/gpu: 1}}"),
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
  CHECK(quota_messages(pod("", kGuaranteed), gpuadmit::test::policy_with(""), view).empty());
}
