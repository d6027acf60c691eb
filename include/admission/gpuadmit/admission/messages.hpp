// How a Decision reads to people: the denial message kubectl prints and the warning lines.
// Shared by the webhook and `gpuadmit check`, so what a platform team sees offline is what users see.
#pragma once

#include <string>
#include <vector>

#include "gpuadmit/policy/decision.hpp"

namespace gpuadmit::admission {

// "gpuadmit denied pod \"x\": 2 problems\n[rule] field: message\n…" — every violation, not the first.
std::string denial_message(const policy::Decision& decision, std::string_view kind, std::string_view name);

// Warning lines for the API server: single-line, at most 120 characters each, de-duplicated, and capped so
// the total stays under the API server's 4096-rune budget (it silently drops what exceeds it).
std::vector<std::string> warning_lines(const std::vector<std::string>& candidates);

}  // namespace gpuadmit::admission
