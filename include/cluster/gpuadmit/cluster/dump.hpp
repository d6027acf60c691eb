// `gpuadmit cluster dump`: the four kinds the cluster-aware rules read, LISTed once, as one v1 List in the
// shape `kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims -A -o json` prints, so
// `gpuadmit check --cluster FILE` (policy::snapshot_from_list) reads either.
#pragma once

#include <array>
#include <cstddef>
#include <stop_token>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct Dump {
  nlohmann::json list;                           // {"apiVersion":"v1","kind":"List","items":[...],...}
  std::array<std::size_t, kKindCount> counts{};  // items per kind, indexed by cluster::index(Kind)
};

// Items get the kind and apiVersion that LIST responses leave out, and lose metadata.managedFields (as
// kubectl hides them). Fails on the first kind that cannot be listed.
Result<Dump> dump_cluster(ApiTransport& transport, std::stop_token stop = {}, std::size_t page_size = 500);

}  // namespace gpuadmit::cluster
