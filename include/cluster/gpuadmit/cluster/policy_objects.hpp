// PolicyObjectWatch: gpuadmit's own policy objects (ClusterGPUPolicy, GPUPolicy; #23 item 4) as `serve
// --policy-objects` follows them. One thread per collection lists it, then watches from the list's
// resourceVersion, and lists again on any change: there are a handful of these objects, so a fresh list
// is simpler than applying events and cannot drift. Each list hands every object of both collections to
// `on_change`, which computes the policies in force and writes the objects' status (patch_status).
//
// A collection whose CRD is not installed (404) counts as listed and empty, and is looked for again every
// `missing_retry`: gpuadmit then serves its file or embedded policy, and picks the objects up once the CRDs
// arrive.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/cluster/backoff.hpp"
#include "gpuadmit/cluster/log_sink.hpp"
#include "gpuadmit/cluster/transport.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct PolicyCollection {
  std::string_view resource;  // "clustergpupolicies": the plural, as in RBAC rules
  std::string_view kind;      // "ClusterGPUPolicy"
  std::string_view path;      // the collection, across all namespaces
  bool namespaced;
};

inline constexpr std::string_view kPolicyApiVersion = "gpuadmit.io/v1alpha1";
inline constexpr std::array<PolicyCollection, 2> kPolicyCollections{{
    {"clustergpupolicies", "ClusterGPUPolicy", "/apis/gpuadmit.io/v1alpha1/clustergpupolicies", false},
    {"gpupolicies", "GPUPolicy", "/apis/gpuadmit.io/v1alpha1/gpupolicies", true},
}};

// Every policy object, as listed (apiVersion and kind set on each), in the API server's order (by namespace,
// then name).
struct PolicyObjects {
  std::vector<nlohmann::json> cluster;     // ClusterGPUPolicies
  std::vector<nlohmann::json> namespaced;  // GPUPolicies
};

struct PolicyWatchOptions {
  BackoffPolicy backoff{};
  std::chrono::seconds watch_timeout{300};  // timeoutSeconds of each watch
  std::chrono::seconds missing_retry{30};   // how often a missing CRD is looked for again
  LogSink log = spdlog_sink();
};

class PolicyObjectWatch {
 public:
  // Called on a watch thread, one call at a time, after every list.
  using OnChange = std::function<void(const PolicyObjects&)>;

  PolicyObjectWatch(std::shared_ptr<ApiTransport> transport, OnChange on_change,
                    PolicyWatchOptions options = {});
  PolicyObjectWatch(const PolicyObjectWatch&) = delete;
  PolicyObjectWatch& operator=(const PolicyObjectWatch&) = delete;
  ~PolicyObjectWatch();  // stop()

  void start();
  void stop();
  // Both collections listed (or found missing) at least once: the policies in force are known.
  [[nodiscard]] bool listed() const;

  // Merge-patches `status` into the status subresource of `object` (as listed). An HTTP error is an error
  // with the API server's message.
  Result<bool> patch_status(const nlohmann::json& object, const nlohmann::json& status,
                            const std::stop_token& stop = {});

 private:
  void run(std::size_t collection, const std::stop_token& stop);
  // One list of `collection`; false when it failed (logged). Reports the new state to on_change.
  bool list(std::size_t collection, std::string& resource_version, const std::stop_token& stop);
  // Watches from `resource_version` until the first change, the end of the watch or a failure; returns
  // whether it worked (false: back off before listing again).
  bool watch_until_change(std::size_t collection, const std::string& resource_version,
                          const std::stop_token& stop);
  static void wait(std::chrono::milliseconds delay, const std::stop_token& stop);

  std::shared_ptr<ApiTransport> transport_;
  OnChange on_change_;
  PolicyWatchOptions options_;
  mutable std::mutex mutex_;
  std::array<std::vector<nlohmann::json>, 2> items_;  // guarded by mutex_
  std::array<bool, 2> listed_{};                      // guarded by mutex_
  std::mutex report_mutex_;                           // one on_change at a time
  std::vector<std::jthread> threads_;
};

}  // namespace gpuadmit::cluster
