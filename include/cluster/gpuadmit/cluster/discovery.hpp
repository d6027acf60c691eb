// API discovery for the kinds `gpuadmit audit` lists: which of the policy's workload kinds the API server
// serves, at which version and under which plural, as kubectl finds them (GET /apis/GROUP, then the
// preferred version's resource list). A group or kind the server does not serve is simply absent.
#pragma once

#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct ServedKind {
  std::string api_version;  // "apps/v1", "v1"
  std::string kind;         // "Deployment"
  std::string resource;     // "deployments"
  bool namespaced = true;
  // The collection across all namespaces: "/apis/apps/v1/deployments".
  [[nodiscard]] std::string path() const;
  // The collection of one namespace: "/apis/apps/v1/namespaces/ml-team/deployments".
  [[nodiscard]] std::string path_in(std::string_view ns) const;
};

// The kinds among `kinds` that group `group` ("" is the core group) serves at its preferred version. An API
// server that does not know the group (404) serves none of them; any other failure is an error.
Result<std::vector<ServedKind>> discover_kinds(ApiTransport& transport, std::string_view group,
                                               const std::vector<std::string>& kinds,
                                               std::stop_token stop = {});

}  // namespace gpuadmit::cluster
