// Pieces of the policy's JSON Schema that more than one part of it uses. Private to the config layer.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "policy_docs.hpp"

namespace gpuadmit::config::schema {

using Json = nlohmann::ordered_json;

// A Kubernetes quantity ("8Gi", "500m", 4): apimachinery's own pattern.
Json quantity();
Json string_list();
Json string_map();
// An object that takes exactly `properties`.
Json closed_object(Json properties);
Json tolerations();
// `schema` with the description docs/policy.md gives `path`, when it gives one.
Json described(Json schema, const PolicyDescriptions& docs, std::string_view path);

}  // namespace gpuadmit::config::schema
