// `gpuadmit cluster dump`: the kinds the cluster-aware rules read (kinds.hpp), LISTed once, as one v1 List in
// the shape `kubectl get nodes,resourcequotas,storageclasses,persistentvolumeclaims,deviceclasses,
// resourceslices,resourceclaims,resourceclaimtemplates -A -o json` prints, so `gpuadmit check --cluster FILE`
// (policy::snapshot_from_list) reads either.
#pragma once

#include <array>
#include <cstddef>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/kinds.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

// An optional kind the dump goes without, and why ("LIST resourceslices: HTTP 404: ...").
struct UnavailableKind {
  Kind kind;
  std::string error;
  int status = 0;  // 404 not served, 403 not allowed
};

struct Dump {
  nlohmann::json list;                           // {"apiVersion":"v1","kind":"List","items":[...],...}
  std::array<std::size_t, kKindCount> counts{};  // items per kind, indexed by cluster::index(Kind)
  std::vector<UnavailableKind> unavailable;      // optional kinds not served (404) or forbidden (403)
};

// Items get the kind and apiVersion that LIST responses leave out, and lose metadata.managedFields (as
// kubectl hides them). An optional kind (the DRA kinds, on a cluster before 1.34 or without the RBAC) that
// is answered 404 or 403 is left out and reported in `unavailable`, as the watcher goes without it; any
// other kind that cannot be listed fails the dump.
Result<Dump> dump_cluster(ApiTransport& transport, std::stop_token stop = {}, std::size_t page_size = 500);

}  // namespace gpuadmit::cluster
