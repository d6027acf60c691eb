#include "gpuadmit/admission/messages.hpp"

#include "gpuadmit/policy/text.hpp"

#include <algorithm>

namespace gpuadmit::admission {
namespace {

constexpr std::size_t kMaxWarningChars = 120;
constexpr std::size_t kWarningBudget = 3500;  // below the API server's 4096 runes, leaving room for others
constexpr std::size_t kMaxWarnings = 12;

}  // namespace

std::string denial_message(const policy::Decision& decision, std::string_view kind, std::string_view name) {
  const std::size_t n = decision.violations.size();
  std::string out = "gpuadmit denied " + std::string(kind) + " \"" + std::string(name) +
                    "\": " + std::to_string(n) + (n == 1 ? " problem" : " problems") + " to fix";
  for (const policy::Finding& f : decision.violations) {
    out += "\n[" + f.rule + "] " + f.field + ": " + f.message;
  }
  // The fixes the mutating webhook would have made: they are made again on the next apply, and they may be
  // what the pod needs besides (the toleration for a taint the scheduler names), so the user sees them now.
  if (!decision.fixes.empty()) {
    out += "\nOnce these are fixed, gpuadmit also makes these changes when it admits the " +
           std::string(kind) + ":";
    for (const policy::Fix& f : decision.fixes) out += "\n  [" + f.rule + "] " + f.description;
  }
  // A controller's FailedCreate event holds this message and not the warnings: what the pod would still
  // wait on once admitted (a claim that cannot bind, a DeviceClass not installed yet) is named here too.
  if (!decision.warnings.empty()) {
    out += "\nAlso, once admitted (warnings):";
    for (const policy::Finding& f : decision.warnings) out += "\n  " + f.summary;
  }
  return out;
}

std::vector<std::string> warning_lines(const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  std::size_t total = 0;
  for (const std::string& candidate : candidates) {
    // Callers already keep to the limit; this is the last guard before the wire.
    std::string line = policy::one_line(candidate, kMaxWarningChars);
    if (line.empty() || std::find(out.begin(), out.end(), line) != out.end()) continue;
    if (out.size() == kMaxWarnings || total + policy::rune_count(line) > kWarningBudget) {
      out.back() = "gpuadmit: more warnings were left out; run gpuadmit check on the manifest to see all";
      break;
    }
    total += policy::rune_count(line);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace gpuadmit::admission
