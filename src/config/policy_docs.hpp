// The descriptions docs/policy.md gives each policy setting, for the policy's JSON Schema: the docs are the
// one place they are written, and the binary embeds them (policy_docs_text.cpp is generated from the file).
// Private to the config layer.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gpuadmit::config {

// docs/policy.md as it was when the binary was built.
std::string_view policy_docs_markdown() noexcept;

// Setting → its description, keyed by the setting's path in the policy:
// - "spec.gpuResources", "spec.cluster.onStale": rows of the "Top-level settings" table ("meaning (default:
//   value)");
// - "spec.rules.memory-floor": the paragraph that opens the rule's section ("Default action: ...");
// - "spec.rules.memory-floor.action": the action's choices and the rule's default action;
// - "spec.rules.memory-floor.perGpu", "spec.rules.guaranteed-qos.defaults.cpuPerGpu": rows of the rule's
//   parameter table.
// Markdown emphasis and code marks are dropped; links keep their text.
using PolicyDescriptions = std::map<std::string, std::string, std::less<>>;
PolicyDescriptions read_policy_docs(std::string_view markdown);

}  // namespace gpuadmit::config
