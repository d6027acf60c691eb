#include "gpuadmit/server/policy_store.hpp"

#include "file_contents.hpp"
#include "gpuadmit/config/policy_loader.hpp"

namespace gpuadmit::server {

Result<std::unique_ptr<PolicyStore>> PolicyStore::open(std::optional<std::filesystem::path> file) {
  if (!file) {
    return std::unique_ptr<PolicyStore>(new PolicyStore(
        std::nullopt, std::string(), std::make_shared<const policy::RuleSet>(config::default_rule_set())));
  }
  auto content = read_file(*file);
  if (!content) return content.error();
  auto rules = config::load_policy(*content, file->string());
  if (!rules) return rules.error();
  return std::unique_ptr<PolicyStore>(new PolicyStore(
      std::move(file), std::move(*content), std::make_shared<const policy::RuleSet>(std::move(*rules))));
}

PolicyStore::PolicyStore(std::optional<std::filesystem::path> file, std::string content,
                         std::shared_ptr<const policy::RuleSet> rules)
    : file_(std::move(file)), last_content_(std::move(content)), current_(std::move(rules)) {}

std::shared_ptr<const policy::RuleSet> PolicyStore::current() const {
  return current_.load();
}

std::string PolicyStore::source() const {
  return file_ ? file_->string() : std::string("<embedded>");
}

ReloadReport PolicyStore::reload_if_changed() {
  if (!file_) return {};
  const std::lock_guard lock(reload_mutex_);
  auto content = read_file(*file_);
  if (!content) {
    // Remembered like content, so a file that stays missing is reported once, not on every poll.
    const std::string marker = std::string(1, '\0') + content.error().message;
    if (marker == last_content_) return {};
    last_content_ = marker;
    return {ReloadStatus::kFailed, content.error().message, {}};
  }
  if (*content == last_content_) return {};
  last_content_ = *content;
  auto rules = config::load_policy(*content, file_->string());
  if (!rules) return {ReloadStatus::kFailed, rules.error().message, {}};
  current_.store(std::make_shared<const policy::RuleSet>(std::move(*rules)));
  return {ReloadStatus::kReloaded, {}, file_->string()};
}

}  // namespace gpuadmit::server
