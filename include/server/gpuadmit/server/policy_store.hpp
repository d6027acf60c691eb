// The policies in force: the file's (or the embedded default), and with --policy-objects the cluster's
// ClusterGPUPolicy and namespaces' GPUPolicies over it (policy_resolution.hpp). Readers take a shared_ptr
// snapshot and keep it for the whole request, so a reload in the middle of a review never mixes two
// policies. Reloads are serialized; readers wait only for the pointer swap at the end of one, never for the
// file read or the parse.
//
// A file that is invalid when the server starts leaves the store with no policy (a restart after a bad
// edit, #47 item 5): the replica stays live, refuses readiness with the loader's error and answers reviews
// with 500, while the replicas that hold the last valid policy keep serving. It never falls back to another
// policy than the one it was given. The first valid version of the file puts it in force.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/common/shared_slot.hpp"
#include "gpuadmit/policy/policy_set.hpp"
#include "gpuadmit/policy/rule_set.hpp"
#include "gpuadmit/server/policy_resolution.hpp"
#include "gpuadmit/server/reload.hpp"

namespace gpuadmit::server {

class PolicyStore {
 public:
  // With a file: loads it now; when it is missing or invalid, no policy is in force until it is fixed
  // (unloaded_reason() says why). Without: the embedded default policy, which never reloads.
  static std::unique_ptr<PolicyStore> open(std::optional<std::filesystem::path> file);

  // Null while no policy is in force.
  [[nodiscard]] std::shared_ptr<const policy::PolicySet> policies() const;
  // The cluster policy in force (policies()->cluster); null while none is.
  [[nodiscard]] std::shared_ptr<const policy::RuleSet> current() const;
  // "" while a policy is in force; otherwise why none is: the loader's error for the file's content.
  [[nodiscard]] std::string unloaded_reason() const;
  [[nodiscard]] std::string source() const;  // the file path, or "<embedded>"

  // Re-reads the file; swaps in a valid new policy, keeps the old one when the new one is invalid.
  ReloadReport reload_if_changed();

  // The policy objects as listed (all of them, each time): swaps in the policies they make and returns the
  // statuses to write. `now`: RFC 3339. `cluster_policy_name`: the ClusterGPUPolicy that is the cluster's.
  std::vector<StatusUpdate> apply_objects(const std::vector<nlohmann::json>& cluster,
                                          const std::vector<nlohmann::json>& namespaced,
                                          const std::string& cluster_policy_name, const std::string& now);
  // What the validating webhook says of a policy object: its problems, a GPUPolicy's against the cluster
  // policy in force.
  [[nodiscard]] std::vector<std::string> object_problems(const nlohmann::json& object) const;

 private:
  PolicyStore(std::optional<std::filesystem::path> file, std::shared_ptr<const policy::RuleSet> rules);
  // Swaps in the policies of the file's rules and the objects last applied (reload_mutex_ held).
  Resolution resolve_locked(const std::string& now);
  // A version of the file that did not load (reload_mutex_ held): while none has, it is why.
  ReloadReport failed_locked(std::string error);

  const std::optional<std::filesystem::path> file_;
  std::mutex reload_mutex_;
  std::string last_content_;  // guarded by reload_mutex_
  // The file's or the default; null until the file first loads. Guarded by reload_mutex_.
  std::shared_ptr<const policy::RuleSet> fallback_;
  bool objects_applied_ = false;                    // guarded by reload_mutex_
  std::vector<nlohmann::json> cluster_objects_;     // guarded by reload_mutex_
  std::vector<nlohmann::json> namespaced_objects_;  // guarded by reload_mutex_
  std::string cluster_policy_name_;                 // guarded by reload_mutex_
  LastValid last_valid_;                            // guarded by reload_mutex_
  SharedSlot<const policy::PolicySet> current_;
  mutable std::mutex reason_mutex_;  // never held with reload_mutex_ taken after it
  std::string unloaded_reason_;      // guarded by reason_mutex_
};

}  // namespace gpuadmit::server
