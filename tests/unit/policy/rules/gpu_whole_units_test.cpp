// gpu-whole-units: a fractional GPU, which the API server rejects tersely and the device plugin cannot
// serve; with a cluster view the denial names the MIG slices the cluster offers.
#include <catch2/catch.hpp>

#include "support/policy_checks.hpp"

using gpuadmit::test::all_text;
using gpuadmit::test::check;
using gpuadmit::test::gpu_cluster_view;
using gpuadmit::test::gpu_pod;
using gpuadmit::test::gpu_pod_with;
using nlohmann::json;

TEST_CASE("gpu-whole-units names the MIG slices this cluster offers and denies one nobody offers",
          "[cluster][gpu-whole-units]") {
  const auto fractional = check(gpu_pod("0.5"), gpu_cluster_view());
  CHECK_THAT(all_text(fractional), Catch::Contains("nvidia.com/mig-1g.10gb (10gb, on 1 node)"));
  const json mig = gpu_pod_with(
      "1", "resources", {{"limits", {{"cpu", "1"}, {"memory", "16Gi"}, {"nvidia.com/mig-3g.40gb", "1"}}}});
  const auto r = check(mig, gpu_cluster_view());
  REQUIRE_FALSE(r.allowed);
  CHECK_THAT(all_text(r),
             Catch::Contains("nvidia.com/mig-3g.40gb, a MIG slice no node in this cluster offers"));
}
