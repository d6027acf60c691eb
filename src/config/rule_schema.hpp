// The schema of one rule's settings (spec.rules.<id>), from the rule's own reader. Private to the config
// layer.
#pragma once

#include "gpuadmit/policy/catalogue.hpp"
#include "schema_fragments.hpp"

namespace gpuadmit::config::schema {

// Asks `rule`'s reader for its settings, as the policy loader does, with `defaults` (the embedded policy) as
// the values it holds; so the schema has exactly the keys, types, ranges and choices the loader accepts.
Json rule_schema(const policy::RuleEntry& rule, const policy::RuleSet& defaults,
                 const PolicyDescriptions& docs);

}  // namespace gpuadmit::config::schema
