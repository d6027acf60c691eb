// The wire encoding of the JSON Patch the policy core computes (a diff, never hand-written).
#pragma once

#include <string>
#include <string_view>

namespace gpuadmit::admission {

// Standard base64 with '=' padding (RFC 4648 §4): what the API server decodes into []byte.
std::string base64_encode(std::string_view bytes);
// The same, appended to `out`.
void append_base64(std::string& out, std::string_view bytes);

}  // namespace gpuadmit::admission
