#include <catch2/catch.hpp>

#include "gpuadmit/k8s/pod_parser.hpp"
#include "gpuadmit/k8s/qos.hpp"
#include "support/fixtures.hpp"

using gpuadmit::k8s::QosClass;

namespace {

QosClass qos_of(const std::string& spec_yaml) {
  auto pod = gpuadmit::k8s::parse_pod(gpuadmit::test::yaml("spec:\n" + spec_yaml));
  if (!pod) FAIL(pod.error().message);
  return gpuadmit::k8s::compute_qos(*pod);
}

}  // namespace

TEST_CASE("QoS class is computed exactly as Kubernetes does", "[qos]") {
  auto [description, spec, expected] = GENERATE(table<const char*, const char*, QosClass>({
      {"no resources at all is BestEffort", "  containers: [{name: a}]", QosClass::kBestEffort},
      {"only a GPU is still BestEffort",
       "  containers: [{name: a, resources: {limits: {nvidia.com/gpu: 1}}}]", QosClass::kBestEffort},
      {"equal cpu and memory requests and limits are Guaranteed",
       "  containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}, limits: {cpu: 1, memory: "
       "1Gi}}}]",
       QosClass::kGuaranteed},
      {"limits only are Guaranteed (requests default to limits)",
       "  containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]", QosClass::kGuaranteed},
      {"equal values in different notation are Guaranteed",
       "  containers: [{name: a, resources: {requests: {cpu: 1000m, memory: 1024Mi}, limits: {cpu: 1, "
       "memory: 1Gi}}}]",
       QosClass::kGuaranteed},
      {"request below limit is Burstable",
       "  containers: [{name: a, resources: {requests: {cpu: 1, memory: 4Gi}, limits: {cpu: 1, memory: "
       "8Gi}}}]",
       QosClass::kBurstable},
      {"cpu only is Burstable", "  containers: [{name: a, resources: {limits: {cpu: 1}}}]",
       QosClass::kBurstable},
      {"a BestEffort init container next to a Guaranteed one makes the pod Burstable",
       "  initContainers: [{name: i}]\n  containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]",
       QosClass::kBurstable},
      {"a Guaranteed sidecar keeps a Guaranteed pod Guaranteed",
       "  initContainers: [{name: s, restartPolicy: Always, resources: {limits: {cpu: 100m, memory: "
       "64Mi}}}]\n"
       "  containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]",
       QosClass::kGuaranteed},
      {"pod-level resources decide alone",
       "  resources: {limits: {cpu: 2, memory: 2Gi}}\n  containers: [{name: a}]", QosClass::kGuaranteed},
      {"pod-level resources below their limit are Burstable",
       "  resources: {requests: {cpu: 1}, limits: {cpu: 2, memory: 2Gi}}\n  containers: [{name: a}]",
       QosClass::kBurstable},
      {"zero quantities do not count",
       "  containers: [{name: a, resources: {requests: {cpu: 0, memory: 0}}}]", QosClass::kBestEffort},
  }));
  INFO(description);
  CHECK(qos_of(spec) == expected);
}
