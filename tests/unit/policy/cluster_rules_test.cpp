// The cluster view itself and what it does to every cluster-aware rule at once: staleness, no view at all,
// idempotent mutation. A rule's own cases with a view are in rules/<id>_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "gpuadmit/policy/evaluate.hpp"
#include "support/policy_checks.hpp"

using gpuadmit::policy::ClusterView;
using gpuadmit::policy::RuleSet;
using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using nlohmann::json;

TEST_CASE("the snapshot indexes nodes by GPU resource and ignores cordoned nodes for the maximum",
          "[cluster]") {
  const ClusterView view = gpu_cluster_view();
  const auto& s = *view.snapshot;
  CHECK(s.nodes.size() == 6);
  CHECK(s.nodes_by_resource.at("nvidia.com/gpu").size() == 4);
  CHECK(s.max_allocatable.at("nvidia.com/gpu").to_string() == "4");
  CHECK(s.default_storage_class()->name == "fast-ssd");
  CHECK(s.claim("ml-team", "llama-checkpoints") != nullptr);
}

TEST_CASE("a stale cluster view turns cluster-aware denials into warnings that say how old it is",
          "[cluster][stale]") {
  const auto r = check(gpu_pod("8"), gpu_cluster_view(true));
  CHECK(r.allowed);
  CHECK_THAT(all_text(r), Catch::Contains("node-fit: (cluster view 420s old) no node can run this pod"));
  RuleSet strict;
  strict.on_stale_cluster = gpuadmit::policy::OnStale::kEnforce;
  CHECK_FALSE(check(gpu_pod("8"), gpu_cluster_view(true), strict).allowed);
}

// #47 item 6: a tenant's kind (claims, templates, volume claims) gone stale must not turn node-fit's or
// gpu-quota's denials of every other pod into warnings. A rule is downgraded by the kinds it reads, and the
// device kinds only for a pod that uses claims.
TEST_CASE("a stale kind downgrades only the rules that read it", "[cluster][stale]") {
  using gpuadmit::policy::view_kind_bit;
  using gpuadmit::policy::ViewKind;
  const auto claims =
      view_kind_bit(ViewKind::kResourceClaim) | view_kind_bit(ViewKind::kResourceClaimTemplate);
  const auto sixteen = gpuadmit::test::dra_pod("resourceClaimTemplateName: sixteen-gpus");
  auto [name, object, cluster, stale, allowed, fragment] =
      GENERATE_COPY(table<std::string, json, std::string, gpuadmit::policy::ViewKinds, bool, std::string>({
          {"claims stale: node-fit still denies a pod that uses none", gpu_pod("8"), "gpu-cluster", claims,
           false, "[node-fit] no node can run this pod"},
          {"quotas stale: node-fit still denies", gpu_pod("8"), "gpu-cluster",
           view_kind_bit(ViewKind::kResourceQuota), false, "[node-fit] no node can run this pod"},
          {"nodes stale: node-fit warns with the view's age", gpu_pod("8"), "gpu-cluster",
           view_kind_bit(ViewKind::kNode), true,
           "node-fit: (cluster view 420s old) no node can run this pod"},
          {"claims stale: dra-claims warns of a pod's claims", sixteen, "dra-cluster", claims, true,
           "dra-claims: (cluster view 420s old)"},
          {"volume claims stale: dra-claims still denies", sixteen, "dra-cluster",
           view_kind_bit(ViewKind::kPersistentVolumeClaim), false, "[dra-claims] request"},
      }));
  CAPTURE(name);
  ClusterView view = gpuadmit::test::view_of(cluster);
  view.stale = true;
  view.stale_kinds = stale;
  view.age_seconds = 420;
  const auto r = check(object, view);
  CHECK(r.allowed == allowed);
  CHECK_THAT(all_text(r), Catch::Contains(fragment));
}

TEST_CASE("without a cluster view the cluster-aware rules are skipped and listed", "[cluster]") {
  auto r = gpuadmit::admission::check_object(gpu_pod("8"), RuleSet{}, "ml-team", nullptr);
  REQUIRE(r.ok());
  CHECK(r->allowed);
  CHECK(r->skipped_rules == std::vector<std::string>{"gpu-type", "cuda-driver", "dra-claims", "node-fit",
                                                     "gpu-memory-fit", "gpu-quota"});
}

TEST_CASE("cluster-aware mutation is idempotent", "[cluster][idempotence]") {
  json object = gpuadmit::test::gpu_pod_with("1", "image", "nvidia/cuda:12.2.0-runtime-ubuntu22.04");
  object["metadata"]["annotations"] = {{"gpuadmit.io/gpu-type", "a100,h100"}};
  RuleSet rules;
  rules.cuda_driver.action = gpuadmit::policy::Action::kEnforce;
  const ClusterView view = gpu_cluster_view();
  auto once = gpuadmit::test::evaluate(object, "ml-team", gpuadmit::policy::Mode::kMutate, rules, &view);
  REQUIRE(once.ok());
  REQUIRE_FALSE(once->patch.empty());
  const json fixed = object.patch(once->patch);
  auto twice = gpuadmit::test::evaluate(fixed, "ml-team", gpuadmit::policy::Mode::kMutate, rules, &view);
  REQUIRE(twice.ok());
  CHECK(twice->patch.empty());
}
