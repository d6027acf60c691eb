#include "gpuadmit/server/policy_store.hpp"

#include "file_contents.hpp"
#include "gpuadmit/config/policy_loader.hpp"

namespace gpuadmit::server {

namespace {

// What reload_if_changed compares for a file it could not read: the error, so a file that stays missing is
// reported once, not on every poll. No policy file holds a NUL byte.
std::string unreadable_marker(const Error& error) {
  return std::string(1, '\0') + error.message;
}

}  // namespace

std::unique_ptr<PolicyStore> PolicyStore::open(std::optional<std::filesystem::path> file) {
  if (!file) {
    return std::unique_ptr<PolicyStore>(
        new PolicyStore(std::nullopt, std::make_shared<const policy::RuleSet>(config::default_rule_set())));
  }
  // The first load is a reload from nothing: what it finds wrong becomes unloaded_reason().
  auto store = std::unique_ptr<PolicyStore>(new PolicyStore(std::move(file), nullptr));
  (void)store->reload_if_changed();
  return store;
}

PolicyStore::PolicyStore(std::optional<std::filesystem::path> file,
                         std::shared_ptr<const policy::RuleSet> rules)
    : file_(std::move(file)),
      // Equal to no content nor unreadable_marker(): the first reload always reads.
      last_content_(1, '\0'),
      fallback_(rules),
      current_(rules ? std::make_shared<const policy::PolicySet>(policy::PolicySet{std::move(rules), {}})
                     : nullptr) {}

std::string PolicyStore::unloaded_reason() const {
  const std::lock_guard lock(reason_mutex_);
  return unloaded_reason_;
}

std::shared_ptr<const policy::PolicySet> PolicyStore::policies() const {
  return current_.load();
}

std::shared_ptr<const policy::RuleSet> PolicyStore::current() const {
  const auto set = current_.load();
  return set ? set->cluster : nullptr;
}

Resolution PolicyStore::resolve_locked(const std::string& now) {
  if (fallback_ == nullptr) return {};  // nothing is in force until the file loads
  if (!objects_applied_) {
    current_.store(std::make_shared<const policy::PolicySet>(policy::PolicySet{fallback_, {}}));
    return {};
  }
  ResolutionInput input{fallback_,
                        file_ ? "policy file " + file_->string() : std::string("embedded default policy"),
                        cluster_policy_name_,
                        &cluster_objects_,
                        &namespaced_objects_,
                        now};
  Resolution resolution = resolve_policies(input, last_valid_);
  current_.store(std::make_shared<const policy::PolicySet>(resolution.policies));
  return resolution;
}

std::vector<StatusUpdate> PolicyStore::apply_objects(const std::vector<nlohmann::json>& cluster,
                                                     const std::vector<nlohmann::json>& namespaced,
                                                     const std::string& cluster_policy_name,
                                                     const std::string& now) {
  const std::lock_guard lock(reload_mutex_);
  objects_applied_ = true;
  cluster_objects_ = cluster;
  namespaced_objects_ = namespaced;
  cluster_policy_name_ = cluster_policy_name;
  return resolve_locked(now).updates;
}

std::vector<std::string> PolicyStore::object_problems(const nlohmann::json& object) const {
  const auto cluster = current();
  if (cluster == nullptr) return {"gpuadmit has no valid policy: " + unloaded_reason()};
  return policy_object_problems(object, *cluster);
}

std::string PolicyStore::source() const {
  return file_ ? file_->string() : std::string("<embedded>");
}

ReloadReport PolicyStore::failed_locked(std::string error) {
  if (fallback_ == nullptr) {
    const std::lock_guard reason_lock(reason_mutex_);
    unloaded_reason_ = error;
  }
  return {ReloadStatus::kFailed, std::move(error), {}};
}

ReloadReport PolicyStore::reload_if_changed() {
  if (!file_) return {};
  const std::lock_guard lock(reload_mutex_);
  auto content = read_file(*file_);
  if (!content) {
    const std::string marker = unreadable_marker(content.error());
    if (marker == last_content_) return {};
    last_content_ = marker;
    return failed_locked(content.error().message);
  }
  if (*content == last_content_) return {};
  last_content_ = *content;
  auto rules = config::load_policy(*content, file_->string());
  if (!rules) return failed_locked(rules.error().message);
  fallback_ = std::make_shared<const policy::RuleSet>(std::move(*rules));
  {
    const std::lock_guard reason_lock(reason_mutex_);
    unloaded_reason_.clear();
  }
  // The statuses of the objects are written again with the next list (their meaning only changes when a
  // GPUPolicy no longer tightens the new file, and then only if no ClusterGPUPolicy is in force).
  const Resolution resolution = resolve_locked({});
  return {ReloadStatus::kReloaded,
          {},
          file_->string() + (objects_applied_ ? " (under " + resolution.source + ")" : "")};
}

}  // namespace gpuadmit::server
