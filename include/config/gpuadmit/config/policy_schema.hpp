// The policy's JSON Schema (draft-07), for editors (yaml-language-server), CI and `gpuadmit policy schema`.
// It is generated, not written: each rule's settings come from the rule's own reader (the keys, types,
// ranges and choices the policy loader accepts, with the embedded default policy's values as defaults), the
// descriptions from docs/policy.md, and the top-level settings mirror the loader's. A policy the schema
// accepts may still fail to load on what a schema cannot say (a quantity of zero, a preset's minimum above
// its maximum); `gpuadmit policy validate` has the last word.
#pragma once

#include <nlohmann/json.hpp>

namespace gpuadmit::config {

nlohmann::ordered_json policy_schema();

}  // namespace gpuadmit::config
