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

TEST_CASE("a pod that writes its checkpoints to a claim too small for its model is denied with the size",
          "[cluster][pvc][checkpoint-pvc]") {
  // pipeline-volume is Kubeflow's pre-created 10Gi default, not labelled as a checkpoint claim: the pod's
  // gpuadmit.io/checkpoint-path says what it is for.
  auto [annotations, mount_path, expected] = GENERATE(table<std::string, std::string, std::string>({
      // The article: 1B parameters × 4 bytes × 10 kept = 40 GB, × the 120% headroom → 45Gi.
      {"gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoints-kept: '10', gpuadmit.io/checkpoint-path: "
       "/mnt/ckpt",
       "/mnt/ckpt",
       "checkpoint claim \"pipeline-volume\" holds 10Gi, less than the 45Gi this pod's checkpoints need (1B "
       "parameters × 4 bytes × 10 checkpoints kept × 120% headroom)"},
      // The path may be a directory inside the mount.
      {"gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoints-kept: '10', gpuadmit.io/checkpoint-path: "
       "/mnt/ckpt/run-7",
       "/mnt/ckpt/", "less than the 45Gi"},
      // The optimizer state a resumable checkpoint keeps.
      {"gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoint-optimizer: 'true', "
       "gpuadmit.io/checkpoint-path: "
       "/mnt/ckpt",
       "/mnt/ckpt", "(1B parameters × 12 bytes (4 weights + 8 optimizer state) × 3 checkpoints kept"},
      // Small enough: 100M × 4 bytes × 3 × 120% = 1.4 GB.
      {"gpuadmit.io/model-parameters: 100M, gpuadmit.io/checkpoint-path: /mnt/ckpt", "/mnt/ckpt", ""},
      // A path beside the mount, or no path, says nothing of this claim.
      {"gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoint-path: /mnt/ckpt2", "/mnt/ckpt", ""},
      {"gpuadmit.io/model-parameters: 1B", "/mnt/ckpt", ""},
  }));
  CAPTURE(annotations, mount_path);
  json object = gpu_pod("1");
  object["metadata"]["namespace"] = "ml-team";
  object["metadata"]["annotations"] = gpuadmit::test::yaml("{" + annotations + "}");
  object["spec"]["volumes"] =
      json::parse(R"([{"name":"ckpt","persistentVolumeClaim":{"claimName":"pipeline-volume"}}])");
  object["spec"]["containers"][0]["volumeMounts"] =
      json::array({{{"name", "ckpt"}, {"mountPath", mount_path}}});
  const auto r = check(object, gpu_cluster_view());
  if (expected.empty()) {
    CHECK_THAT(all_text(r), !Catch::Contains("checkpoint claim"));
  } else {
    REQUIRE_FALSE(r.allowed);
    CHECK_THAT(r.violations.at(0).message, Catch::Contains(expected));
    CHECK_THAT(r.violations.at(0).message, Catch::Contains("kubectl patch pvc pipeline-volume -n ml-team"));
  }
}

TEST_CASE("an unreadable checkpoint annotation is named with what it takes, and only warned about",
          "[cluster][pvc][checkpoint-pvc]") {
  const auto [annotation, said] = GENERATE(table<std::string, std::string>({
      {"gpuadmit.io/checkpoints-kept: ten",
       "annotation gpuadmit.io/checkpoints-kept: \"ten\" is not a whole number from 1 to 1000"},
      {"gpuadmit.io/checkpoints-kept: '0'", "gpuadmit.io/checkpoints-kept: \"0\" is not a whole number"},
      {"gpuadmit.io/checkpoint-bytes-per-parameter: lots",
       "gpuadmit.io/checkpoint-bytes-per-parameter: \"lots\" is not a number above 0"},
      {"gpuadmit.io/checkpoint-optimizer: 'yes'",
       "gpuadmit.io/checkpoint-optimizer: \"yes\" is not true or false"},
      {"gpuadmit.io/checkpoint-optimizer: 'true', gpuadmit.io/optimizer: lion",
       "gpuadmit.io/optimizer: \"lion\" is not one of adam, adamw, sgd, none"},
  }));
  CAPTURE(annotation);
  // On the claim itself: a warning, and the claim is held to the policy minimum alone (1Ti passes it).
  const json claim = gpuadmit::test::yaml(
      "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c, namespace: ml-team, labels: "
      "{gpuadmit.io/checkpoint: 'true'}, annotations: {gpuadmit.io/model-parameters: 1B, " +
      annotation + "}}\nspec: {resources: {requests: {storage: 1Ti}}}");
  const auto on_claim = check(claim, gpu_cluster_view());
  CHECK(on_claim.allowed);
  CHECK_THAT(pvc_warnings(on_claim), Catch::Contains(said));
  json small = claim;
  small["spec"]["resources"]["requests"]["storage"] = "10Gi";
  const auto on_small = check(small, gpu_cluster_view());
  REQUIRE_FALSE(on_small.allowed);
  CHECK_THAT(on_small.violations.at(0).message,
             Catch::Contains("less than the 50Gi it needs (the policy minimum"));
  // On a pod that writes its checkpoints to a claim: a warning from checkpoint-pvc itself.
  json pod = gpu_pod("1");
  pod["metadata"]["namespace"] = "ml-team";
  pod["metadata"]["annotations"] = gpuadmit::test::yaml(
      "{gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoint-path: /ckpt, " + annotation + "}");
  pod["spec"]["volumes"] =
      json::parse(R"([{"name":"ckpt","persistentVolumeClaim":{"claimName":"pipeline-volume"}}])");
  pod["spec"]["containers"][0]["volumeMounts"] = json::array({{{"name", "ckpt"}, {"mountPath", "/ckpt"}}});
  const auto on_pod = check(pod, gpu_cluster_view());
  CHECK(on_pod.allowed);
  CHECK_THAT(pvc_warnings(on_pod), Catch::Contains(said));
}

TEST_CASE("a bound claim is weighed by the volume it holds, not the size it asked for",
          "[cluster][pvc][checkpoint-pvc]") {
  // pipeline-volume asked for 10Gi; bound to a 500Gi volume, it holds 45Gi of checkpoints.
  auto view = gpu_cluster_view();
  auto objects = gpuadmit::test::fixture("cluster/gpu-cluster.yaml");
  for (auto& item : objects["items"]) {
    if (item["metadata"]["name"] == "pipeline-volume") item["status"]["capacity"] = {{"storage", "500Gi"}};
  }
  auto snapshot = gpuadmit::policy::snapshot_from_list(objects);
  REQUIRE(snapshot.ok());
  view.snapshot = std::make_shared<const gpuadmit::policy::ClusterSnapshot>(std::move(*snapshot));
  json pod = gpu_pod("1");
  pod["metadata"]["namespace"] = "ml-team";
  pod["metadata"]["annotations"] = gpuadmit::test::yaml(
      "{gpuadmit.io/model-parameters: 1B, gpuadmit.io/checkpoints-kept: '10', gpuadmit.io/checkpoint-path: "
      "/ckpt}");
  pod["spec"]["volumes"] =
      json::parse(R"([{"name":"ckpt","persistentVolumeClaim":{"claimName":"pipeline-volume"}}])");
  pod["spec"]["containers"][0]["volumeMounts"] = json::array({{{"name", "ckpt"}, {"mountPath", "/ckpt"}}});
  CHECK(check(pod, view).allowed);
  CHECK_FALSE(check(pod, gpu_cluster_view()).allowed);
}
