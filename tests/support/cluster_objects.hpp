// JSON builders for the cluster tests: API objects and watch events as the API server writes them.
#pragma once

#include <array>
#include <string>

#include "gpuadmit/cluster/kinds.hpp"

namespace gpuadmit::test {

// The collection paths the fake transport is scripted by, as the reflectors ask for them.
inline const std::string kNodes{cluster::info(cluster::Kind::kNode).path};
inline const std::string kQuotas{cluster::info(cluster::Kind::kResourceQuota).path};
inline const std::string kClasses{cluster::info(cluster::Kind::kStorageClass).path};
inline const std::string kClaims{cluster::info(cluster::Kind::kPersistentVolumeClaim).path};
inline const std::string kDeviceClasses{cluster::info(cluster::Kind::kDeviceClass).path};
inline const std::string kSlices{cluster::info(cluster::Kind::kResourceSlice).path};
inline const std::string kResourceClaims{cluster::info(cluster::Kind::kResourceClaim).path};
inline const std::string kClaimTemplates{cluster::info(cluster::Kind::kResourceClaimTemplate).path};
inline const std::string kNodePools{cluster::info(cluster::Kind::kNodePool).path};
// The DRA kinds (resource.k8s.io/v1), which an API server before 1.34 does not serve.
inline const std::array<std::string, 4> kDraPaths{kDeviceClasses, kSlices, kResourceClaims, kClaimTemplates};
// Every optional kind: the DRA kinds and Karpenter's NodePool (karpenter.sh/v1), served only where it runs.
inline const std::array<std::string, 5> kOptionalPaths{kDeviceClasses, kSlices, kResourceClaims,
                                                       kClaimTemplates, kNodePools};
// Every kind the watcher lists, in cluster::kAllKinds order.
inline const std::array<std::string, 9> kAllPaths{kNodes,          kQuotas,         kClasses,
                                                  kClaims,         kDeviceClasses,  kSlices,
                                                  kResourceClaims, kClaimTemplates, kNodePools};

inline std::string node_json(const std::string& name, const std::string& rv, const std::string& gpus = "4",
                             const std::string& spec = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
         R"(","labels":{"gpu":"a100"}},"spec":)" + spec +
         R"(,"status":{"allocatable":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":")" + gpus +
         R"("},"conditions":[{"type":"Ready","status":"True"}]}})";
}

inline std::string quota_json(const std::string& ns, const std::string& name, const std::string& rv,
                              const std::string& gpus) {
  return R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"hard":{"requests.nvidia.com/gpu":")" + gpus + R"("}}})";
}

inline std::string device_class_json(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com'"}}]}})";
}

// A ResourceSlice of `gpus` GPUs local to `node`, as NVIDIA's DRA driver publishes them.
inline std::string slice_json(const std::string& node, const std::string& rv, int gpus = 8,
                              const std::string& product = "NVIDIA A100-SXM4-80GB") {
  std::string devices;
  for (int i = 0; i < gpus; ++i) {
    devices += (i == 0 ? "" : ",") + std::string(R"({"name":"gpu-)") + std::to_string(i) +
               R"(","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-)" + node + "-" +
               std::to_string(i) + R"("},"productName":{"string":")" + product +
               R"("},"cudaComputeCapability":{"version":"8.0.0"}},"capacity":{"memory":{"value":"80Gi"}}})";
  }
  return R"({"metadata":{"name":")" + node + R"(-gpu.nvidia.com","resourceVersion":")" + rv +
         R"("},"spec":{"driver":"gpu.nvidia.com","nodeName":")" + node + R"(","pool":{"name":")" + node +
         R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}

inline std::string resource_claim_json(const std::string& ns, const std::string& name, const std::string& rv,
                                       int count = 1) {
  return R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","count":)" +
         std::to_string(count) + "}}]}}}";
}

inline std::string claim_template_json(const std::string& ns, const std::string& name,
                                       const std::string& rv) {
  return R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}}})";
}

// A Karpenter NodePool of GPU instances (karpenter.sh/v1).
inline std::string node_pool_json(const std::string& name, const std::string& rv) {
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + rv +
         R"("},"spec":{"template":{"spec":{"requirements":[{"key":"karpenter.k8s.aws/instance-category",)"
         R"("operator":"In","values":["g","p"]}]}}}})";
}

inline std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

inline std::string bookmark(const std::string& rv) {
  return event("BOOKMARK",
               R"({"kind":"Node","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + R"("}})");
}

inline std::string error_event(int code, const std::string& message) {
  return event("ERROR", R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")" + message +
                            R"(","code":)" + std::to_string(code) + "}");
}

}  // namespace gpuadmit::test
