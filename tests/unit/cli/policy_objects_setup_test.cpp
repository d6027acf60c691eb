#include <catch2/catch.hpp>

#include "gpuadmit/cli/serve_cluster_view.hpp"

using gpuadmit::cli::ClusterViewFlags;
using gpuadmit::cli::policy_objects_setup;

TEST_CASE("policy objects need an API server: a kubeconfig or a pod's service account", "[serve-flags]") {
  const std::map<std::string, std::string> outside;
  const std::map<std::string, std::string> in_pod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};
  ClusterViewFlags with_kubeconfig;
  with_kubeconfig.kubeconfig = "/tmp/kubeconfig";
  // name, enabled, flags, environment, an error ("" when it sets up), whether a source is made
  auto [name, enabled, flags, env, error, made] = GENERATE_COPY(
      table<std::string, bool, ClusterViewFlags, std::map<std::string, std::string>, std::string, bool>({
          {"off makes nothing", false, ClusterViewFlags{}, outside, "", false},
          {"outside a pod without a kubeconfig is an error", true, ClusterViewFlags{}, outside,
           "--policy-objects needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)", false},
          {"a kubeconfig will do", true, with_kubeconfig, outside, "", true},
          {"so will a pod", true, ClusterViewFlags{}, in_pod, "", true},
      }));
  INFO(name);
  const auto setup = policy_objects_setup(enabled, "default", flags, &env);
  if (!error.empty()) {
    REQUIRE_FALSE(setup.ok());
    CHECK(setup.error().message == error);
    return;
  }
  REQUIRE(setup.ok());
  CHECK(static_cast<bool>(setup->make) == made);
  CHECK(setup->cluster_policy_name == "default");
}

TEST_CASE("an empty --cluster-policy-name is refused", "[serve-flags]") {
  const std::map<std::string, std::string> none;
  const auto setup = policy_objects_setup(false, "", ClusterViewFlags{}, &none);
  REQUIRE_FALSE(setup.ok());
  CHECK(setup.error().message == "--cluster-policy-name must not be empty");
}
