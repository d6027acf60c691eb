// A proxy between gpuadmit and the API server, as kubectl uses one: a kubeconfig cluster's `proxy-url`, else
// HTTPS_PROXY and NO_PROXY in the environment (Go's http.ProxyFromEnvironment, which client-go's default
// transport uses). The transport opens a tunnel through it (HTTP CONNECT, or a SOCKS5 CONNECT) and speaks TLS
// to the API server inside, so the proxy sees neither the requests nor the credentials.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

enum class ProxyScheme { kHttp, kSocks5 };

struct Proxy {
  ProxyScheme scheme = ProxyScheme::kHttp;
  std::string host;  // DNS name or IP literal (IPv6 without brackets)
  std::uint16_t port = 80;
  std::string user_info;  // "user:password" from the URL, %-escapes decoded, or ""
  std::string url;        // for messages: the URL without its password
  bool operator==(const Proxy&) const = default;
};

// http://[user[:password]@]host[:port][/] (port 80), or socks5:// and socks5h:// (port 1080; the proxy
// resolves the API server's name either way, as Go's SOCKS dialer has it do); a URL without a scheme is taken
// as http://, as Go takes it. https:// proxies (TLS to the proxy), which kubectl also accepts, are refused.
Result<Proxy> parse_proxy_url(std::string_view url);

// An http proxy's Proxy-Authorization: "Basic <base64(user_info)>", or "" without user info.
std::string basic_authorization(const Proxy& proxy);

// Whether NO_PROXY's list exempts host:port, by Go's rules (golang.org/x/net/http/httpproxy): "*" exempts
// every host; an entry is an IP (that address), a CIDR (its addresses), or a domain ("example.com" is that
// name and its subdomains, ".example.com" and "*.example.com" its subdomains only), each with an optional
// ":port". Matching ignores case.
bool no_proxy_exempts(std::string_view no_proxy, std::string_view host, std::uint16_t port);

// The proxy the environment gives an https request to host:port: HTTPS_PROXY (else https_proxy) unless
// NO_PROXY (else no_proxy) exempts the host; none for localhost and loopback addresses, which Go never
// proxies. `env`: the variables (nullptr: this process's environment).
Result<std::optional<Proxy>> proxy_from_environment(std::string_view host, std::uint16_t port,
                                                    const std::map<std::string, std::string>* env = nullptr);

}  // namespace gpuadmit::cluster
