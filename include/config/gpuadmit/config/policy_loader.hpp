// Policy YAML (apiVersion gpuadmit.io/v1alpha1, kind Policy) → validated RuleSet.
// Strict: an unknown key, a wrong type or an invalid value is an error with file:line:column and what was
// expected; every error in the document is reported, not only the first. Rules the file leaves out keep
// their default (the embedded default policy).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/policy/rule_set.hpp"

namespace gpuadmit::config {

// The default policy, compiled into the binary (printed by `gpuadmit policy default`).
std::string_view default_policy_yaml() noexcept;

// `source_name` is what error messages call the document (a path, or "<embedded>").
Result<policy::RuleSet> load_policy(std::string_view yaml, std::string_view source_name);
Result<policy::RuleSet> load_policy_file(const std::string& path);
// A ClusterGPUPolicy or GPUPolicy as the API server returns it (#23 item 4): its spec read as a policy's,
// with the same checks; errors name the object and the field's path ("ClusterGPUPolicy/strict:
// spec.rules.memory-floor.action: ..."), since the object has no lines of its own.
// A GPUPolicy is read onto `cluster` (the default policy when null) and may only tighten it: an action no
// looser, a floor (docs/policy.md lists them) no lower, nothing else; the result is the policy of its
// namespace.
Result<policy::RuleSet> load_policy_object(const nlohmann::json& object,
                                           const policy::RuleSet* cluster = nullptr);

// The built-in policy: what serve and check use without --policy.
const policy::RuleSet& default_rule_set();

}  // namespace gpuadmit::config
