#include "gpuadmit/cluster/device_view_pool.hpp"

#include <functional>
#include <string>
#include <variant>

namespace gpuadmit::cluster {
namespace {

void mix(std::size_t& seed, std::size_t value) {
  seed ^= value + 0x9E3779B97F4A7C15ULL + (seed << 6U) + (seed >> 2U);
}

// Equal views hash equal (what operator== compares); unequal ones may collide, and are told apart by ==.
std::size_t hash_of(const k8s::DeviceView& view) {
  std::size_t seed = std::hash<std::string>{}(view.driver);
  mix(seed, view.allow_multiple_allocations ? 1U : 0U);
  for (const auto& [name, value] : view.attributes) {
    mix(seed, std::hash<std::string>{}(name));
    mix(seed, value.index());
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, k8s::VersionText>) {
            mix(seed, std::hash<std::string>{}(v.text));
          } else {
            mix(seed, std::hash<T>{}(v));
          }
        },
        value);
  }
  for (const auto& [name, quantity] : view.capacity) {
    mix(seed, std::hash<std::string>{}(name));
    mix(seed, std::hash<std::int64_t>{}(quantity.milli_ceil()));
  }
  return seed;
}

}  // namespace

void DeviceViewPool::intern(k8s::ResourceSlice& slice) {
  const std::lock_guard lock(mutex_);
  // The devices of a slice mostly share one view already: look each distinct pointer up once.
  View last_seen;
  View last_pooled;
  for (k8s::Device& device : slice.devices) {
    if (!device.view) continue;
    if (device.view != last_seen) {
      last_seen = device.view;
      last_pooled = find_or_add_locked(device.view);
    }
    device.view = last_pooled;
  }
  if (entries_ >= sweep_at_) sweep_locked();
}

DeviceViewPool::View DeviceViewPool::find_or_add_locked(const View& view) {
  auto& bucket = views_[hash_of(*view)];
  for (const auto& weak : bucket) {
    if (View pooled = weak.lock(); pooled && (pooled == view || *pooled == *view)) return pooled;
  }
  bucket.push_back(view);
  ++entries_;
  return view;
}

void DeviceViewPool::sweep_locked() {
  entries_ = 0;
  for (auto it = views_.begin(); it != views_.end();) {
    auto& bucket = it->second;
    std::erase_if(bucket, [](const auto& weak) { return weak.expired(); });
    entries_ += bucket.size();
    it = bucket.empty() ? views_.erase(it) : std::next(it);
  }
  sweep_at_ = std::max<std::size_t>(1024, 2 * entries_);
}

std::size_t DeviceViewPool::size() const {
  const std::lock_guard lock(mutex_);
  return entries_;
}

}  // namespace gpuadmit::cluster
