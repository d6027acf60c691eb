// One copy of each distinct device view across the cached ResourceSlices. The parser shares one view among
// the devices of a slice that differ only in their names and in the attributes that tell them apart (a
// uuid: Device::own_attributes); the pool shares it across slices too, so 4,000 nodes of the same 8 GPUs
// hold one view of them, not 4,000. Views are immutable; one that no cached slice holds any more is
// forgotten (the pool keeps weak pointers, swept as it grows). SnapshotStore interns every slice it caches;
// thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "gpuadmit/k8s/dra_objects.hpp"

namespace gpuadmit::cluster {

class DeviceViewPool {
 public:
  // Points every device of `slice` at the pool's copy of its view (adding the view when it is new).
  void intern(k8s::ResourceSlice& slice);
  // Distinct views the pool knows of, dead ones not yet swept included (tests, the benchmark).
  [[nodiscard]] std::size_t size() const;

 private:
  using View = std::shared_ptr<const k8s::DeviceView>;
  View find_or_add_locked(const View& view);
  void sweep_locked();

  mutable std::mutex mutex_;
  std::unordered_map<std::size_t, std::vector<std::weak_ptr<const k8s::DeviceView>>> views_;  // by hash
  std::size_t entries_ = 0;
  std::size_t sweep_at_ = 1024;
};

}  // namespace gpuadmit::cluster
