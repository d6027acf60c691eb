// checkpoint-pvc: a claim labelled as a checkpoint is sized from the model it keeps. On pods: a claim that
// does not exist, or one (or an ephemeral volume's claim template) whose storage class cannot provision it,
// leaves the pod Pending; gpuadmit says so at apply time.
#include <catch2/catch.hpp>

#include <string>

#include "support/policy_checks.hpp"

namespace {

using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::view_of;
using nlohmann::json;

json pod_with_volume(const std::string& volume) {
  return gpuadmit::test::yaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml-team}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
    - name: main
      image: busybox
      resources: {limits: {cpu: '4', memory: 64Gi, nvidia.com/gpu: 1}}
  volumes:
    - )" + volume + "\n");
}

std::string pvc_warnings(const gpuadmit::admission::CheckResult& r) {
  std::string out;
  for (const auto& w : r.warnings) {
    if (w.starts_with("checkpoint-pvc")) out += w + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("checkpoint-pvc warns when a pod's volume claim cannot bind for want of its storage class",
          "[checkpoint-pvc]") {
  auto [volume, expected] = GENERATE(table<std::string, std::string>({
      {"{name: data, persistentVolumeClaim: {claimName: data-zonal}}",
       "claim \"data-zonal\" cannot bind: storage class \"zonal-rwx\" does not exist"},
      {"{name: data, persistentVolumeClaim: {claimName: data-ok}}", ""},
      {"{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: premium-rwo, accessModes: "
       "[ReadWriteOnce], resources: {requests: {storage: 1Ti}}}}}}",
       "ephemeral volume \"scratch\": storage class \"premium-rwo\" does not exist"},
      {"{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: "
       "{requests: {storage: 1Ti}}}}}}",
       "ephemeral volume \"scratch\": no storage class is named and the cluster has no default one"},
      {"{name: scratch, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: standard-rwo, "
       "accessModes: "
       "[ReadWriteOnce], resources: {requests: {storage: 1Ti}}}}}}",
       ""},
  }));
  CAPTURE(volume);
  const auto view = view_of("scoped-quotas");
  const auto r = check(pod_with_volume(volume), gpuadmit::test::policy_with(""), &view);
  const std::string text = pvc_warnings(r);
  if (expected.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(expected));
  }
}

TEST_CASE("checkpoint-pvc warns on any claim whose storage class cannot provision it", "[checkpoint-pvc]") {
  auto [storage_class, expected] = GENERATE(table<std::string, std::string>({
      {"zonal-rwx", "claim \"c\": storage class \"zonal-rwx\" does not exist"},
      {"standard-rwo", ""},
      {"''", ""},
  }));
  CAPTURE(storage_class);
  const auto view = view_of("scoped-quotas");
  const json claim = gpuadmit::test::yaml(R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: c, namespace: ml-team}
spec:
  storageClassName: )" + storage_class + R"(
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Gi}}
)");
  const auto r = check(claim, gpuadmit::test::policy_with(""), &view);
  CHECK(r.allowed);
  const std::string text = pvc_warnings(r);
  if (expected.empty()) {
    CHECK(text.empty());
  } else {
    CHECK_THAT(text, Catch::Contains(expected));
  }
}

TEST_CASE("checkpoint-pvc sizes a checkpoint claim from the model and checks its class",
          "[cluster][pvc][checkpoint-pvc]") {
  auto [claim_yaml, fragment] = GENERATE(table<std::string, std::string>({
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'}}\n"
       "spec: {resources: {requests: {storage: 10Gi}}}",
       "requests 10Gi, less than the 50Gi it needs (the policy minimum 50Gi)"},
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'},\n"
       "  annotations: {gpuadmit.io/model-parameters: 70B, gpuadmit.io/model-precision: bf16}}\n"
       "spec: {resources: {requests: {storage: 200Gi}}}",
       "less than the 470Gi it needs (70B parameters × 2 bytes × 3 checkpoints kept × 120% headroom)"},
      {"metadata: {name: c, namespace: ml-team, labels: {gpuadmit.io/checkpoint: 'true'}}\n"
       "spec: {storageClassName: slow-hdd, resources: {requests: {storage: 100Gi}}}",
       "uses storage class \"slow-hdd\", which does not exist"},
  }));
  const json claim = gpuadmit::test::yaml("apiVersion: v1\nkind: PersistentVolumeClaim\n" + claim_yaml);
  const auto r = check(claim, gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  CHECK_THAT(r.violations.at(0).message, Catch::Contains(fragment));
}

TEST_CASE("an unmarked or big enough claim is allowed", "[cluster][pvc][checkpoint-pvc]") {
  const json plain = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {resources: {requests: "
      "{storage: 1Gi}}}");
  CHECK(check(plain, gpu_cluster_view()).allowed);
  const json big = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, labels: {gpuadmit.io/checkpoint: "
      "'true'}}\n"
      "spec: {resources: {requests: {storage: 1Ti}}}");
  CHECK(check(big, gpu_cluster_view()).allowed);
}

TEST_CASE("a pod that mounts a claim that does not exist gets a warning", "[cluster][pvc][checkpoint-pvc]") {
  json object = gpu_pod("1");
  object["spec"]["volumes"] =
      json::parse(R"([{"name":"ckpt","persistentVolumeClaim":{"claimName":"missing"}}])");
  CHECK_THAT(all_text(check(object, gpu_cluster_view())),
             Catch::Contains("claim \"missing\" does not exist (yet)"));
}
