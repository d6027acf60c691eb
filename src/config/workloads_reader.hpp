// spec.workloads of a policy: the kinds whose pod templates are judged as pods. Private to the config layer.
#pragma once

#include <yaml-cpp/yaml.h>

#include "gpuadmit/policy/rule_set.hpp"
#include "yaml_reader.hpp"

namespace gpuadmit::config {

void read_workloads(YamlReader& r, const YAML::Node& node, policy::RuleSet& rules);

}  // namespace gpuadmit::config
