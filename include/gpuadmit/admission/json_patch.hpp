// JSON Patch (RFC 6902) as the diff of the original and the mutated object, and its wire encoding.
// Never hand-written: an empty diff means "no patch field" in the response.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuadmit::admission {

// The operations that turn `original` into `mutated` (nlohmann::json::diff: add/remove/replace, with
// RFC 6901 escaping of '~' and '/' in keys such as nvidia.com/gpu). Empty array when equal.
nlohmann::json make_patch(const nlohmann::json& original, const nlohmann::json& mutated);

// Standard base64 with '=' padding (RFC 4648 §4): what the API server decodes into []byte.
std::string base64_encode(std::string_view bytes);

}  // namespace gpuadmit::admission
