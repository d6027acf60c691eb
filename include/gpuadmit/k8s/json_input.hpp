// Bounded JSON parsing for untrusted input (AdmissionReview bodies, files given to `gpuadmit check`).
// nlohmann's recursive algorithms (copy, dump, diff) follow nesting depth, so depth is checked by a linear
// pre-scan before parsing; size is checked first of all. Errors name the byte offset and the limit.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::k8s {

struct JsonLimits {
  std::size_t max_bytes = 7 * 1024 * 1024;  // controller-runtime's AdmissionReview cap: 2 objects × 3 MiB + 1 MiB
  std::size_t max_depth = 64;               // real pods nest about 12 deep
};

Result<nlohmann::json> parse_json(std::string_view text, const JsonLimits& limits = {});

// The deepest nesting of arrays/objects in `text`, ignoring brackets inside strings; stops early past `cap`.
std::size_t json_depth(std::string_view text, std::size_t cap) noexcept;

}  // namespace gpuadmit::k8s
