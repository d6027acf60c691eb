// Bounded JSON parsing for untrusted input (AdmissionReview bodies, files given to `gpuadmit check`).
// nlohmann's recursive algorithms (copy, dump, diff) follow nesting depth, so depth is bounded while
// parsing; size is checked first of all. Errors name the line and column, or the limit.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::k8s {

struct JsonLimits {
  // controller-runtime's AdmissionReview cap: 2 objects × 3 MiB + 1 MiB.
  std::size_t max_bytes = std::size_t{7} * 1024 * 1024;
  std::size_t max_depth = 64;  // real pods nest about 12 deep
};

// A member's key path from the root, e.g. {"request", "oldObject"}. Only object members can be named.
using JsonPath = std::vector<std::string_view>;

// Strict JSON (RFC 8259, UTF-8) into nlohmann::json. Members at the `drop` paths (at most 32) are checked
// for syntax but left out of the result: the webhook never reads managedFields, status or oldObject, and
// building them would allocate values that are thrown away unread.
Result<nlohmann::json> parse_json(std::string_view text, const JsonLimits& limits = {},
                                  std::span<const JsonPath> drop = {});

}  // namespace gpuadmit::k8s
