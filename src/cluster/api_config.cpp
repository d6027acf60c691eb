#include "gpuadmit/cluster/api_config.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <system_error>

#include <yaml-cpp/yaml.h>

#include "gpuadmit/common/text.hpp"

namespace gpuadmit::cluster {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxConfigFileBytes = 4U << 20U;  // kubeconfigs with embedded certificates are ~10 KiB

Result<std::string> read_small_file(const fs::path& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(std::string(what) + " " + path.string() + ": " +
                      std::generic_category().message(errno));
  }
  std::string content;
  std::array<char, 16384> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    content.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (content.size() > kMaxConfigFileBytes) {
      return make_error(std::string(what) + " " + path.string() + " is larger than " +
                        std::to_string(kMaxConfigFileBytes) + " bytes");
    }
  }
  if (in.bad()) return make_error("cannot read " + std::string(what) + " " + path.string());
  return content;
}

Result<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return make_error("invalid port \"" + std::string(text) + "\"");
  }
  return static_cast<std::uint16_t>(value);
}

// https://host[:port][/prefix]; IPv6 hosts in brackets.
Result<bool> parse_server_url(std::string_view url, ApiConfig& config) {
  constexpr std::string_view kScheme = "https://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return make_error("server \"" + std::string(url) + "\": only https:// URLs are supported");
  }
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view prefix = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  if (prefix.find_first_of("?#") != std::string_view::npos) {
    return make_error("server \"" + std::string(url) + "\": a query or fragment is not supported");
  }
  if (authority.find('@') != std::string_view::npos) {
    return make_error("server \"" + std::string(url) + "\": credentials in the URL are not supported");
  }
  std::string_view host;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return make_error("server \"" + std::string(url) + "\": unclosed [");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return make_error("server \"" + std::string(url) + "\": junk after ]");
      port = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (host.empty()) return make_error("server \"" + std::string(url) + "\": no host");
  config.host = std::string(host);
  config.port = 443;
  if (!port.empty()) {
    auto parsed = parse_port(port);
    if (!parsed) return make_error("server \"" + std::string(url) + "\": " + parsed.error().message);
    config.port = *parsed;
  }
  config.path_prefix = std::string(prefix);
  return true;
}

// A named entry of one of the kubeconfig's lists (clusters, users, contexts): its inner map.
Result<YAML::Node> find_named(const YAML::Node& root, const char* list, const char* inner,
                              const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && !entries.IsSequence()) return make_error(std::string(list) + ": expected a list");
  if (entries) {
    for (const YAML::Node& entry : entries) {
      if (entry.IsMap() && entry["name"] && entry["name"].IsScalar() && entry["name"].Scalar() == name) {
        const YAML::Node value = entry[inner];
        if (!value) return YAML::Node(YAML::NodeType::Map);
        if (!value.IsMap())
          return make_error(std::string(list) + "[" + name + "]." + inner + ": expected a map");
        return value;
      }
    }
  }
  return make_error(std::string(list) + ": no entry named \"" + name + "\"");
}

std::string scalar(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.Scalar() : std::string();
}

fs::path relative_to(const fs::path& base_file, const std::string& path) {
  const fs::path p(path);
  return p.is_absolute() ? p : base_file.parent_path() / p;
}

// `<key>-data` (base64) or `<key>` (a file).
Result<std::string> data_or_file(const YAML::Node& map, const std::string& key, const fs::path& kubeconfig,
                                 const std::string& where) {
  const std::string data = scalar(map, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = decode_base64(data);
    if (!decoded) return make_error(where + "." + key + "-data: " + decoded.error().message);
    return std::move(*decoded);
  }
  const std::string file = scalar(map, key.c_str());
  if (file.empty()) return std::string();
  return read_small_file(relative_to(kubeconfig, file), where + "." + key);
}

bool is_set(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  if (!value || value.IsNull()) return false;
  if (value.IsScalar()) return !value.Scalar().empty() && value.Scalar() != "false";
  return value.size() > 0;
}

// The context's cluster: the server and how to trust it.
Result<bool> read_cluster(const YAML::Node& cluster, const fs::path& file, const std::string& where,
                          ApiConfig& config) {
  const std::string server = scalar(cluster, "server");
  if (server.empty()) return make_error(where + ".server: missing");
  if (auto ok = parse_server_url(server, config); !ok) return make_error(where + "." + ok.error().message);
  if (is_set(cluster, "insecure-skip-tls-verify")) {
    return make_error(where +
                      ".insecure-skip-tls-verify: not supported; give certificate-authority or "
                      "certificate-authority-data");
  }
  if (is_set(cluster, "proxy-url")) return make_error(where + ".proxy-url: proxies are not supported");
  config.tls_server_name = scalar(cluster, "tls-server-name");
  auto ca = data_or_file(cluster, "certificate-authority", file, where);
  if (!ca) return ca.error();
  if (ca->empty()) {
    return make_error(where +
                      ": no certificate-authority or certificate-authority-data (the server's "
                      "certificate must be verified)");
  }
  config.ca_pem = std::move(*ca);
  if (scalar(cluster, "certificate-authority-data").empty())
    config.ca_file = relative_to(file, scalar(cluster, "certificate-authority"));
  return true;
}

// Refuses the ways of authenticating that are not supported: plugins, basic authentication, impersonation.
Result<bool> check_user_supported(const YAML::Node& user, const std::string& where) {
  for (const char* unsupported : {"exec", "auth-provider"}) {
    if (is_set(user, unsupported)) {
      return make_error(where + "." + unsupported +
                        ": credential plugins are not supported; use a client certificate or a token");
    }
  }
  for (const char* unsupported : {"username", "password"}) {
    if (is_set(user, unsupported)) {
      return make_error(where + "." + unsupported + ": basic authentication is not supported");
    }
  }
  for (const char* unsupported : {"as", "as-uid", "as-groups", "as-user-extra"}) {
    if (is_set(user, unsupported)) {
      return make_error(where + "." + unsupported + ": impersonation is not supported");
    }
  }
  return true;
}

// The context's user: a client certificate, a token or a token file.
Result<bool> read_user(const YAML::Node& user, const fs::path& file, const std::string& where,
                       ApiConfig& config) {
  if (auto supported = check_user_supported(user, where); !supported) return supported.error();
  auto certificate = data_or_file(user, "client-certificate", file, where);
  if (!certificate) return certificate.error();
  auto key = data_or_file(user, "client-key", file, where);
  if (!key) return key.error();
  if (certificate->empty() != key->empty()) {
    return make_error(where + ": client-certificate and client-key must be given together");
  }
  config.client_certificate_pem = std::move(*certificate);
  config.client_key_pem = std::move(*key);
  config.token = scalar(user, "token");
  const std::string token_file = scalar(user, "tokenFile");
  if (!token_file.empty()) {
    config.token_file = relative_to(file, token_file);
    if (auto readable = read_small_file(config.token_file, where + ".tokenFile"); !readable) {
      return readable.error();
    }
  }
  return true;
}

Result<ApiConfig> parse_kubeconfig(const YAML::Node& root, const fs::path& file,
                                   const std::string& context_name) {
  if (!root.IsMap()) return make_error("expected a map at the top level");
  std::string context = context_name;
  if (context.empty()) context = scalar(root, "current-context");
  if (context.empty()) return make_error("no current-context (and no --context given)");
  auto ctx = find_named(root, "contexts", "context", context);
  if (!ctx) return ctx.error();
  const std::string cluster_name = scalar(*ctx, "cluster");
  const std::string user_name = scalar(*ctx, "user");
  if (cluster_name.empty()) return make_error("context \"" + context + "\" names no cluster");
  auto cluster = find_named(root, "clusters", "cluster", cluster_name);
  if (!cluster) return cluster.error();

  ApiConfig config;
  config.source = "kubeconfig " + file.string() + " (context " + context + ")";
  if (auto read = read_cluster(*cluster, file, "clusters[" + cluster_name + "].cluster", config); !read) {
    return read.error();
  }
  if (user_name.empty()) return config;  // anonymous: allowed, the API server decides
  auto user = find_named(root, "users", "user", user_name);
  if (!user) return user.error();
  if (auto read = read_user(*user, file, "users[" + user_name + "].user", config); !read) return read.error();
  return config;
}

}  // namespace

std::string ApiConfig::url() const {
  return "https://" + bracketed_host() + ":" + std::to_string(port) + path_prefix;
}

std::string ApiConfig::bracketed_host() const {
  return url_host(host);
}

Result<ApiConfig> in_cluster_config(const InClusterPaths& paths,
                                    const std::map<std::string, std::string>* env) {
  const auto variable = [&](const std::string& name) -> std::string {
    if (env != nullptr) {
      const auto it = env->find(name);
      return it == env->end() ? std::string() : it->second;
    }
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read at start-up only
    return value == nullptr ? std::string() : std::string(value);
  };
  const std::string host = variable("KUBERNETES_SERVICE_HOST");
  const std::string port = variable("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return make_error(
        "not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (use "
        "--kubeconfig)");
  }
  ApiConfig config;
  config.source = "in-cluster";
  config.host = host;
  auto parsed_port = parse_port(port);
  if (!parsed_port) return make_error("KUBERNETES_SERVICE_PORT: " + parsed_port.error().message);
  config.port = *parsed_port;
  auto ca = read_small_file(paths.ca, "service-account CA");
  if (!ca) return ca.error();
  config.ca_pem = std::move(*ca);
  config.ca_file = paths.ca;
  // Read now so a missing mount fails at start-up; the transport re-reads it for every request.
  if (auto token = read_small_file(paths.token, "service-account token"); !token) return token.error();
  config.token_file = paths.token;
  return config;
}

Result<ApiConfig> load_kubeconfig(const fs::path& file, const std::string& context) {
  auto text = read_small_file(file, "kubeconfig");
  if (!text) return text.error();
  return kubeconfig_from_text(*text, file, context);
}

Result<ApiConfig> kubeconfig_from_text(std::string_view text, const fs::path& file,
                                       const std::string& context) {
  if (text.size() > kMaxConfigFileBytes) {
    return make_error("kubeconfig " + file.string() + " is larger than " +
                      std::to_string(kMaxConfigFileBytes) + " bytes");
  }
  try {
    auto config = parse_kubeconfig(YAML::Load(std::string(text)), file, context);
    if (!config) return make_error("kubeconfig " + file.string() + ": " + config.error().message);
    return config;
  } catch (const YAML::Exception& e) {
    return make_error("kubeconfig " + file.string() + ": " + e.what());
  }
}

Result<ApiConfig> resolve_api_config(const std::optional<std::string>& kubeconfig, const std::string& context,
                                     const InClusterPaths& paths) {
  if (kubeconfig && !kubeconfig->empty()) return load_kubeconfig(*kubeconfig, context);
  const char* from_env = std::getenv("KUBECONFIG");  // NOLINT(concurrency-mt-unsafe): read at start-up only
  if (from_env != nullptr && *from_env != '\0') {
    const std::string value(from_env);
    if (value.find(':') != std::string::npos) {
      return make_error(
          "KUBECONFIG lists several files; merging them is not supported (use --kubeconfig FILE)");
    }
    return load_kubeconfig(value, context);
  }
  return in_cluster_config(paths);
}

Result<std::string> decode_base64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t accumulator = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return make_error("invalid base64: data after padding");
    std::uint32_t value = 0;
    if (c >= 'A' && c <= 'Z') {
      value = static_cast<std::uint32_t>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      value = static_cast<std::uint32_t>(c - 'a' + 26);
    } else if (c >= '0' && c <= '9') {
      value = static_cast<std::uint32_t>(c - '0' + 52);
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else {
      return make_error("invalid base64: unexpected character");
    }
    accumulator = (accumulator << 6U) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> static_cast<unsigned>(bits)) & 0xFFU));
    }
  }
  if (padding > 2 || bits >= 6) return make_error("invalid base64: truncated");
  return out;
}

}  // namespace gpuadmit::cluster
