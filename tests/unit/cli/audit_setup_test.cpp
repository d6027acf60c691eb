#include <catch2/catch.hpp>

#include "gpuadmit/cli/serve_cluster_view.hpp"

using gpuadmit::cli::audit_setup;
using gpuadmit::cli::ClusterViewFlags;
using Flag = std::optional<std::string>;

TEST_CASE("serve's --audit-interval takes a duration of 10s or more and a Lease, and needs the cluster view",
          "[serve-flags]") {
  const std::map<std::string, std::string> outside;
  const std::map<std::string, std::string> in_pod{
      {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"POD_NAMESPACE", "gpuadmit"}, {"POD_NAME", "gpuadmit-0"}};
  const std::map<std::string, std::string> in_pod_without_namespace{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};
  // name, --audit-interval, --audit-lease, environment, an error ("" when it sets up), the Lease, seconds
  auto [name, interval, lease, env, error, lease_name,
        seconds] = GENERATE_COPY(table<std::string, Flag, Flag, std::map<std::string, std::string>,
                                       std::string, std::string, long long>({
      {"off makes nothing", Flag{}, Flag{}, in_pod, "", "", 0},
      {"in a pod, the Lease in its namespace", Flag{"1h"}, Flag{}, in_pod, "", "gpuadmit/gpuadmit-audit",
       3600},
      {"a Lease named on the command line", Flag{"90s"}, Flag{"ops/audit"}, in_pod, "", "ops/audit", 90},
      {"too often", Flag{"5s"}, Flag{}, in_pod, "--audit-interval: at least 10s, not 5s", "", 0},
      {"not a duration", Flag{"1d"}, Flag{}, in_pod,
       "--audit-interval: \"1d\" is not a duration: write hours, minutes and seconds as in 720h, 23h59m or "
       "90s",
       "", 0},
      {"outside a pod without a kubeconfig", Flag{"1h"}, Flag{"ops/audit"}, outside,
       "--audit-interval needs the cluster view: --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)",
       "", 0},
      {"no namespace to put the Lease in", Flag{"1h"}, Flag{}, in_pod_without_namespace,
       "--audit-interval: give --audit-lease NAMESPACE/NAME (POD_NAMESPACE is not set)", "", 0},
      {"a path in the Lease name", Flag{"1h"}, Flag{"ops/../secrets/x"}, in_pod,
       "--audit-lease wants NAMESPACE/NAME of a Lease (e.g. gpuadmit/gpuadmit-audit), not "
       "\"ops/../secrets/x\"",
       "", 0},
      {"a Lease without an interval", Flag{}, Flag{"ops/audit"}, in_pod,
       "--audit-lease needs --audit-interval", "", 0},
  }));
  INFO(name);
  const auto setup = audit_setup(interval, lease, ClusterViewFlags{}, &env);
  if (!error.empty()) {
    REQUIRE_FALSE(setup.ok());
    CHECK(setup.error().message == error);
    return;
  }
  REQUIRE(setup.ok());
  CHECK(static_cast<bool>(setup->make) == interval.has_value());
  CHECK(setup->lease == lease_name);
  CHECK(setup->interval.count() == seconds);
}

TEST_CASE("the background audit is refused with the cluster view off", "[serve-flags]") {
  const std::map<std::string, std::string> in_pod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                  {"POD_NAMESPACE", "x"}};
  ClusterViewFlags off;
  off.mode = "off";
  const auto setup = audit_setup(Flag{"1h"}, Flag{}, off, &in_pod);
  REQUIRE_FALSE(setup.ok());
  CHECK(setup.error().message ==
        "--audit-interval needs the cluster view: --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
}
