// The RuleSet in force. Readers take a shared_ptr snapshot and keep it for the whole request, so a reload in
// the middle of a review never mixes two policies. Reloads are serialized; readers wait only for
// the pointer swap at the end of one, never for the file read or the parse.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/common/shared_slot.hpp"
#include "gpuadmit/policy/rule_set.hpp"
#include "gpuadmit/server/reload.hpp"

namespace gpuadmit::server {

class PolicyStore {
 public:
  // With a file: loads it now (an invalid file is an error: refuse to start on a policy we cannot read).
  // Without: the embedded default policy, which never reloads.
  static Result<std::unique_ptr<PolicyStore>> open(std::optional<std::filesystem::path> file);

  [[nodiscard]] std::shared_ptr<const policy::RuleSet> current() const;
  [[nodiscard]] std::string source() const;  // the file path, or "<embedded>"

  // Re-reads the file; swaps in a valid new policy, keeps the old one when the new one is invalid.
  ReloadReport reload_if_changed();

 private:
  PolicyStore(std::optional<std::filesystem::path> file, std::string content,
              std::shared_ptr<const policy::RuleSet> rules);

  const std::optional<std::filesystem::path> file_;
  std::mutex reload_mutex_;
  std::string last_content_;  // guarded by reload_mutex_
  SharedSlot<const policy::RuleSet> current_;
};

}  // namespace gpuadmit::server
