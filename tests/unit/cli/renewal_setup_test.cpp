#include <catch2/catch.hpp>

#include "gpuadmit/cli/serve_cluster_view.hpp"

using gpuadmit::cli::ClusterViewFlags;
using gpuadmit::cli::renewal_setup;
using Flag = std::optional<std::string>;

TEST_CASE("serve's --renew-secret takes NAMESPACE/NAME and an API server, --renew-before a duration",
          "[serve-flags]") {
  const std::map<std::string, std::string> outside;
  const std::map<std::string, std::string> in_pod{{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}};
  // name, --renew-secret, --renew-before, environment, an error ("" when it sets up), renew_before in seconds
  auto [name, secret, before, env, error,
        seconds] = GENERATE_COPY(table<std::string, Flag, Flag, std::map<std::string, std::string>,
                                       std::string, long long>({
      {"off makes nothing", Flag{}, Flag{}, outside, "", 720LL * 3600},
      {"in a pod, with the default lead", Flag{"gpuadmit/gpuadmit-tls"}, Flag{}, in_pod, "", 720LL * 3600},
      {"a lead in hours and minutes", Flag{"gpuadmit/gpuadmit-tls"}, Flag{"23h59m"}, in_pod, "",
       23 * 3600 + 59 * 60},
      {"outside a pod without a kubeconfig", Flag{"gpuadmit/gpuadmit-tls"}, Flag{}, outside,
       "--renew-secret needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)", 0},
      {"no namespace", Flag{"gpuadmit-tls"}, Flag{}, in_pod,
       "--renew-secret wants NAMESPACE/NAME of the TLS Secret (e.g. gpuadmit/gpuadmit-tls), not "
       "\"gpuadmit-tls\"",
       0},
      {"a path in the name", Flag{"gpuadmit/../configmaps/x"}, Flag{}, in_pod,
       "--renew-secret wants NAMESPACE/NAME of the TLS Secret (e.g. gpuadmit/gpuadmit-tls), not "
       "\"gpuadmit/../configmaps/x\"",
       0},
      {"days are not a unit", Flag{"gpuadmit/gpuadmit-tls"}, Flag{"30d"}, in_pod,
       "--renew-before: \"30d\" is not a duration: write hours, minutes and seconds as in 720h, 23h59m or "
       "90s",
       0},
      {"a lead without a Secret", Flag{}, Flag{"720h"}, in_pod, "--renew-before needs --renew-secret", 0},
  }));
  INFO(name);
  const auto setup = renewal_setup(secret, before, ClusterViewFlags{}, &env);
  if (!error.empty()) {
    REQUIRE_FALSE(setup.ok());
    CHECK(setup.error().message == error);
    return;
  }
  REQUIRE(setup.ok());
  CHECK(static_cast<bool>(setup->make) == secret.has_value());
  CHECK(setup->policy.renew_before.count() == seconds);
}
