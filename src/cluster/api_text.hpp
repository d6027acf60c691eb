// What the reflector and the paged LIST share about the API's text: query escaping and the message of an
// HTTP error. Private to the cluster layer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::size_t kLoggedLineBytes = 200;

// A LIST page or watch event as JSON. Subtrees nested deeper than kMaxJsonDepth become null first (a
// claim's opaque driver parameters, which no rule reads, may legally nest thousands deep), counted in
// `clipped`: one tenant's object never fails the page, the event or its kind.
Result<nlohmann::json> parse_api_json(std::string_view text, std::size_t& clipped);

// RFC 3986 percent-encoding of everything but the unreserved characters (a continue token, a version).
std::string percent_encode(std::string_view text);

// "HTTP 403: nodes is forbidden: User ... cannot list ..." from a Status body when there is one.
std::string describe_status(int status, const std::string& body);

}  // namespace gpuadmit::cluster
