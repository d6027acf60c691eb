#include <catch2/catch.hpp>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/k8s/scheduling.hpp"
#include "support/fixtures.hpp"

using gpuadmit::k8s::NodeSelectorRequirement;
using gpuadmit::k8s::Taint;
using gpuadmit::k8s::Toleration;

TEST_CASE("tolerations match taints with Kubernetes' semantics", "[scheduling]") {
  const Taint gpu{"nvidia.com/gpu", "present", "NoSchedule"};
  auto [description, toleration, expected] = GENERATE(table<const char*, Toleration, bool>({
      {"Exists on the key matches any value", {"nvidia.com/gpu", "Exists", "", "NoSchedule", {}}, true},
      {"Equal with the same value matches", {"nvidia.com/gpu", "Equal", "present", "NoSchedule", {}}, true},
      {"an empty operator means Equal", {"nvidia.com/gpu", "", "present", "", {}}, true},
      {"Equal with another value does not match",
       {"nvidia.com/gpu", "Equal", "absent", "NoSchedule", {}},
       false},
      {"an empty effect matches every effect", {"nvidia.com/gpu", "Exists", "", "", {}}, true},
      {"another effect does not match", {"nvidia.com/gpu", "Exists", "", "NoExecute", {}}, false},
      {"an empty key with Exists matches every taint", {"", "Exists", "", "", {}}, true},
      {"another key does not match", {"amd.com/gpu", "Exists", "", "NoSchedule", {}}, false},
  }));
  INFO(description);
  CHECK(gpuadmit::k8s::tolerates(toleration, gpu) == expected);
}

TEST_CASE("node selector requirements support every operator", "[scheduling]") {
  const gpuadmit::k8s::StringMap labels{{"gpu", "a100"}, {"gpu.count", "8"}, {"zone", "a"}};
  auto [description, requirement, expected] = GENERATE(table<const char*, NodeSelectorRequirement, bool>({
      {"In with the value", {"gpu", "In", {"t4", "a100"}}, true},
      {"In without the value", {"gpu", "In", {"t4"}}, false},
      {"In on a missing label", {"missing", "In", {"x"}}, false},
      {"NotIn without the value", {"gpu", "NotIn", {"t4"}}, true},
      {"NotIn with the value", {"gpu", "NotIn", {"a100"}}, false},
      {"NotIn on a missing label matches", {"missing", "NotIn", {"x"}}, true},
      {"Exists on a present label", {"zone", "Exists", {}}, true},
      {"Exists on a missing label", {"missing", "Exists", {}}, false},
      {"DoesNotExist on a missing label", {"missing", "DoesNotExist", {}}, true},
      {"DoesNotExist on a present label", {"zone", "DoesNotExist", {}}, false},
      {"Gt compares integers", {"gpu.count", "Gt", {"4"}}, true},
      {"Gt is strict", {"gpu.count", "Gt", {"8"}}, false},
      {"Lt compares integers", {"gpu.count", "Lt", {"16"}}, true},
      {"Gt never matches a label that is not an integer", {"gpu", "Gt", {"1"}}, false},
      {"Gt with a non-integer bound never matches", {"gpu.count", "Gt", {"x"}}, false},
      {"an unknown operator never matches", {"gpu", "Like", {"a100"}}, false},
  }));
  INFO(description);
  CHECK(gpuadmit::k8s::matches(requirement, labels) == expected);
}

TEST_CASE("required node affinity ORs terms and ANDs expressions", "[scheduling]") {
  gpuadmit::k8s::Node node;
  node.name = "gpu-node-1";
  node.labels = {{"gpu", "a100"}, {"zone", "a"}};
  const auto pod_with = [](const std::string& affinity_yaml) {
    auto pod =
        gpuadmit::k8s::parse_pod(gpuadmit::test::yaml("spec:\n  containers: [{name: a}]\n" + affinity_yaml));
    REQUIRE(pod.ok());
    return *pod;
  };
  const std::string prefix =
      "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        "
      "nodeSelectorTerms:\n";
  CHECK(gpuadmit::k8s::node_selector_matches(
      pod_with(prefix + "        - matchExpressions: [{key: gpu, operator: In, values: [t4]}]\n"
                        "        - matchExpressions: [{key: gpu, operator: In, values: [a100]}]\n"),
      node));
  CHECK_FALSE(gpuadmit::k8s::node_selector_matches(
      pod_with(prefix + "        - matchExpressions: [{key: gpu, operator: In, values: [a100]}, "
                        "{key: zone, operator: In, values: [b]}]\n"),
      node));
  CHECK_FALSE(gpuadmit::k8s::node_selector_matches(pod_with(prefix + "        - {}\n"), node));
  CHECK(gpuadmit::k8s::node_selector_matches(
      pod_with(prefix +
               "        - matchFields: [{key: metadata.name, operator: In, values: [gpu-node-1]}]\n"),
      node));
  CHECK_FALSE(gpuadmit::k8s::node_selector_matches(pod_with("  nodeSelector: {gpu: t4}\n"), node));
  CHECK(gpuadmit::k8s::node_selector_matches(pod_with("  nodeSelector: {gpu: a100}\n"), node));
}
