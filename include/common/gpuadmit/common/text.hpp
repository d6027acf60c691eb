// Small text helpers more than one layer needs.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace gpuadmit {

// `text` without leading and trailing whitespace (the C locale's isspace).
inline std::string_view trim_space(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return text;
}

// A host as a URL or a Host header writes it: an IPv6 address in brackets, anything else as it is.
inline std::string url_host(std::string_view host) {
  if (host.find(':') != std::string_view::npos) return "[" + std::string(host) + "]";
  return std::string(host);
}

}  // namespace gpuadmit
