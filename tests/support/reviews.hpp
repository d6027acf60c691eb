// Builds AdmissionReview request bodies around an object, as kube-apiserver sends them.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuadmit::test {

inline std::string admission_review(const nlohmann::json& object,
                                    const std::string& uid = "705ab4f5-6393-11e8-b7cc-42010a800002",
                                    const std::string& operation = "CREATE",
                                    const std::string& kind = "Pod") {
  nlohmann::json review = {
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request",
       {{"uid", uid},
        {"kind", {{"group", ""}, {"version", "v1"}, {"kind", kind}}},
        {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
        {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", kind}}},
        {"namespace", object.value("/metadata/namespace"_json_pointer, std::string("ml-team"))},
        {"name", object.value("/metadata/name"_json_pointer, std::string())},
        {"operation", operation},
        {"userInfo", {{"username", "alice@example.com"}, {"groups", {"system:authenticated"}}}},
        {"object", object},
        {"oldObject", nullptr},
        {"dryRun", false},
        {"options", {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}}}}}};
  return review.dump();
}

}  // namespace gpuadmit::test
