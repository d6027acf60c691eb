// spec.presets of a policy: the settings a fix adds to matching pods. Private to the config layer.
#pragma once

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "gpuadmit/policy/rule_set.hpp"
#include "yaml_reader.hpp"

namespace gpuadmit::config {

// `node` is the YAML of spec.presets and `value` the same text as JSON (kubectl's scalar rules, for the
// Kubernetes objects a preset carries), or null when it has none.
void read_presets(YamlReader& r, const YAML::Node& node, const nlohmann::json* value, policy::RuleSet& rules);

}  // namespace gpuadmit::config
