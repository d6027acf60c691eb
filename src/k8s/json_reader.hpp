// The JSON reader behind parse_json (private to the k8s layer).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::k8s {

// Parses `text` (no size check: the caller did it), failing past `max_depth` nested containers; members at
// the `drop` paths are checked for syntax and left out.
Result<nlohmann::json> read_json(std::string_view text, std::size_t max_depth,
                                 std::span<const JsonPath> drop);

}  // namespace gpuadmit::k8s
