#include "gpuadmit/cluster/proxy.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "gpuadmit/cluster/api_config.hpp"

namespace gpuadmit::cluster {
namespace {

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return text;
}

// %XX escapes of a URL's user info.
Result<std::string> percent_decoded(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size() || std::isxdigit(static_cast<unsigned char>(text[i + 1])) == 0 ||
        std::isxdigit(static_cast<unsigned char>(text[i + 2])) == 0) {
      return make_error("a bad %-escape in the user info");
    }
    out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
    i += 2;
  }
  return out;
}

// An IP address's bytes (4 or 16), or none.
struct Ip {
  std::array<unsigned char, 16> bytes{};
  std::size_t size = 0;
  bool operator==(const Ip&) const = default;
};

std::optional<Ip> parse_ip(std::string_view text) {
  const std::string s(text);
  Ip ip;
  if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) {
    ip.size = 4;
    return ip;
  }
  if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) == 1) {
    ip.size = 16;
    return ip;
  }
  return std::nullopt;
}

bool loopback(const Ip& ip) {
  if (ip.size == 4) return ip.bytes[0] == 127;
  const std::array<unsigned char, 16> one{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return ip.bytes == one;
}

// "10.0.0.0/8" or "fd00::/8" containing `ip`; false for anything else.
bool cidr_contains(std::string_view entry, const Ip& ip, bool& is_cidr) {
  const std::size_t slash = entry.find('/');
  is_cidr = false;
  if (slash == std::string_view::npos) return false;
  const auto network = parse_ip(entry.substr(0, slash));
  const std::string bits_text(entry.substr(slash + 1));
  if (!network || bits_text.empty() || bits_text.size() > 3 ||
      !std::all_of(bits_text.begin(), bits_text.end(),
                   [](unsigned char c) { return std::isdigit(c) != 0; })) {
    return false;
  }
  const auto bits = static_cast<std::size_t>(std::stoi(bits_text));
  if (bits > network->size * 8) return false;
  is_cidr = true;
  if (network->size != ip.size) return false;
  for (std::size_t i = 0; i < bits; ++i) {
    const auto mask = static_cast<unsigned char>(0x80U >> (i % 8));
    if ((network->bytes[i / 8] & mask) != (ip.bytes[i / 8] & mask)) return false;
  }
  return true;
}

// An entry's host and port: "host:port", "[v6]:port", or the entry whole.
std::pair<std::string, std::string> split_host_port(const std::string& entry) {
  if (!entry.empty() && entry.front() == '[') {
    const std::size_t close = entry.find(']');
    if (close != std::string::npos && close + 1 < entry.size() && entry[close + 1] == ':')
      return {entry.substr(1, close - 1), entry.substr(close + 2)};
    return {entry, ""};
  }
  const std::size_t colon = entry.find(':');
  if (colon != std::string::npos && entry.find(':', colon + 1) == std::string::npos)
    return {entry.substr(0, colon), entry.substr(colon + 1)};
  return {entry, ""};
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string variable(const std::map<std::string, std::string>* env, const char* upper,
                     const char* lower_name) {
  for (const char* name : {upper, lower_name}) {
    if (env != nullptr) {
      if (const auto it = env->find(name); it != env->end() && !it->second.empty()) return it->second;
      continue;
    }
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read at start-up only
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

}  // namespace

Result<Proxy> parse_proxy_url(std::string_view url) {
  const std::string what = "proxy URL \"" + std::string(url) + "\"";
  std::string_view rest = trim(url);
  std::string scheme = "http";
  if (const std::size_t sep = rest.find("://"); sep != std::string_view::npos) {
    scheme = ascii_lower(rest.substr(0, sep));
    rest.remove_prefix(sep + 3);
  }
  Proxy proxy;
  if (scheme == "socks5" || scheme == "socks5h") {
    proxy.scheme = ProxyScheme::kSocks5;
    proxy.port = 1080;
  } else if (scheme != "http") {
    return make_error(what + ": only http://, socks5:// and socks5h:// proxies are supported; not " + scheme +
                      "://");
  }
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  const std::string_view path = rest.substr(authority.size());
  if (!path.empty() && path != "/") return make_error(what + ": a proxy URL has no path");
  std::string_view host_port = authority;
  std::string user_shown;
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view info = authority.substr(0, at);
    host_port = authority.substr(at + 1);
    auto decoded = percent_decoded(info);
    if (!decoded) return make_error(what + ": " + decoded.error().message);
    proxy.user_info = std::move(*decoded);
    user_shown = std::string(info.substr(0, info.find(':'))) + "@";
  }
  std::string port_text;
  if (!host_port.empty() && host_port.front() == '[') {
    const std::size_t close = host_port.find(']');
    if (close == std::string_view::npos) return make_error(what + ": an IPv6 address without its ']'");
    proxy.host = std::string(host_port.substr(1, close - 1));
    const std::string_view after = host_port.substr(close + 1);
    if (!after.empty() && after.front() != ':') return make_error(what + ": text after the IPv6 address");
    if (!after.empty()) port_text = std::string(after.substr(1));
  } else {
    const std::size_t colon = host_port.find(':');
    proxy.host = std::string(host_port.substr(0, colon));
    if (colon != std::string_view::npos) port_text = std::string(host_port.substr(colon + 1));
  }
  if (proxy.host.empty()) return make_error(what + ": no host");
  if (!port_text.empty()) {
    const bool digits =
        port_text.size() <= 5 &&
        std::all_of(port_text.begin(), port_text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    const long port = digits ? std::strtol(port_text.c_str(), nullptr, 10) : 0;
    if (port < 1 || port > 65535) return make_error(what + ": the port is not 1-65535");
    proxy.port = static_cast<std::uint16_t>(port);
  }
  const bool v6 = proxy.host.find(':') != std::string::npos;
  proxy.url = scheme + "://" + user_shown + (v6 ? "[" + proxy.host + "]" : proxy.host) + ":" +
              std::to_string(proxy.port);
  return proxy;
}

std::string basic_authorization(const Proxy& proxy) {
  return proxy.user_info.empty() ? std::string() : "Basic " + encode_base64(proxy.user_info);
}

bool no_proxy_exempts(std::string_view no_proxy, std::string_view host_in, std::uint16_t port) {
  const std::string host = ascii_lower(trim(host_in));
  const std::string port_text = std::to_string(port);
  const std::optional<Ip> ip = parse_ip(host);
  std::size_t start = 0;
  while (start <= no_proxy.size()) {
    const std::size_t comma = std::min(no_proxy.find(',', start), no_proxy.size());
    const std::string entry = ascii_lower(trim(no_proxy.substr(start, comma - start)));
    start = comma + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    bool is_cidr = false;
    if (ip && cidr_contains(entry, *ip, is_cidr)) return true;
    if (is_cidr || entry.find('/') != std::string::npos) continue;
    auto [entry_host, entry_port] = split_host_port(entry);
    if (entry_host.empty() || (!entry_port.empty() && entry_port != port_text)) continue;
    if (const auto entry_ip = parse_ip(entry_host)) {
      if (ip && *entry_ip == *ip) return true;
      continue;
    }
    if (entry_host.rfind("*.", 0) == 0) entry_host.erase(0, 1);
    const bool match_host = entry_host.front() != '.';
    if (match_host) entry_host.insert(0, ".");
    if (ends_with(host, entry_host) || (match_host && host == entry_host.substr(1))) return true;
  }
  return false;
}

Result<std::optional<Proxy>> proxy_from_environment(std::string_view host, std::uint16_t port,
                                                    const std::map<std::string, std::string>* env) {
  const std::string url = variable(env, "HTTPS_PROXY", "https_proxy");
  if (url.empty()) return std::optional<Proxy>();
  if (ascii_lower(host) == "localhost") return std::optional<Proxy>();
  if (const auto ip = parse_ip(host); ip && loopback(*ip)) return std::optional<Proxy>();
  if (no_proxy_exempts(variable(env, "NO_PROXY", "no_proxy"), host, port)) return std::optional<Proxy>();
  auto proxy = parse_proxy_url(url);
  if (!proxy)
    return make_error("HTTPS_PROXY: " + proxy.error().message + " (or exempt the API server in NO_PROXY)");
  return std::optional<Proxy>(std::move(*proxy));
}

Result<bool> use_environment_proxy(ApiConfig& config, const std::map<std::string, std::string>* env) {
  if (config.proxy) return true;
  auto proxy = proxy_from_environment(config.host, config.port, env);
  if (!proxy) return make_error(config.source + ": " + proxy.error().message);
  config.proxy = std::move(*proxy);
  return true;
}

}  // namespace gpuadmit::cluster
