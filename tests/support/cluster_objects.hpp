// JSON builders for the cluster tests: API objects and watch events as the API server writes them.
#pragma once

#include <string>

#include "gpuadmit/cluster/kinds.hpp"

namespace gpuadmit::test {

// The collection paths the fake transport is scripted by, as the reflectors ask for them.
inline const std::string kNodes{cluster::info(cluster::Kind::kNode).path};
inline const std::string kQuotas{cluster::info(cluster::Kind::kResourceQuota).path};
inline const std::string kClasses{cluster::info(cluster::Kind::kStorageClass).path};
inline const std::string kClaims{cluster::info(cluster::Kind::kPersistentVolumeClaim).path};

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
