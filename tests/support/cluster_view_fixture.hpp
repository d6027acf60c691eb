// A cluster view built once from a cluster fixture (a List of nodes, quotas, classes and claims), for the
// tests and fuzz targets that judge reviews against a cluster.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "gpuadmit/policy/cluster_snapshot.hpp"
#include "support/fixtures.hpp"

namespace gpuadmit::test {

// tests/fixtures/cluster/gpu-cluster.yaml; throws if the fixture does not load.
inline const policy::ClusterView& shared_gpu_cluster_view() {
  static const policy::ClusterView view = [] {
    auto snapshot = policy::snapshot_from_list(fixture("cluster/gpu-cluster.yaml"));
    if (!snapshot) throw std::runtime_error(snapshot.error().message);
    return policy::ClusterView{std::make_shared<const policy::ClusterSnapshot>(std::move(*snapshot))};
  }();
  return view;
}

}  // namespace gpuadmit::test
