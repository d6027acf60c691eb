#include "gpuadmit/cluster/api_config.hpp"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <map>
#include <system_error>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gpuadmit/common/text.hpp"
#include "kubeconfig_exec.hpp"

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

// The kubeconfig files merged as kubectl merges them: the first file to set current-context, or to name a
// cluster, user or context, wins, and an entry is taken whole from that file (whose directory anchors its
// relative paths).
struct Entry {
  YAML::Node value;  // the inner map (`cluster`, `user`, `context`)
  fs::path file;
};
struct Merged {
  std::string current_context;
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
};

// Adds one list of a file's entries (clusters, users, contexts) to `into`, keeping names already there.
Result<bool> merge_list(const YAML::Node& root, const char* list, const char* inner, const fs::path& file,
                        std::map<std::string, Entry>& into) {
  const YAML::Node entries = root[list];
  if (!entries || entries.IsNull()) return true;
  if (!entries.IsSequence()) return make_error(std::string(list) + ": expected a list");
  for (const YAML::Node& entry : entries) {
    if (!entry.IsMap() || !entry["name"] || !entry["name"].IsScalar()) {
      return make_error(std::string(list) + ": an entry without a name");
    }
    const std::string name = entry["name"].Scalar();
    YAML::Node value = entry[inner];
    if (!value || value.IsNull()) value = YAML::Node(YAML::NodeType::Map);
    if (!value.IsMap()) return make_error(std::string(list) + "[" + name + "]." + inner + ": expected a map");
    into.try_emplace(name, Entry{value, file});
  }
  return true;
}

Result<bool> merge_file(const YAML::Node& root, const fs::path& file, Merged& merged) {
  if (root.IsNull()) return true;  // an empty file sets nothing
  if (!root.IsMap()) return make_error("expected a map at the top level");
  const YAML::Node current = root["current-context"];
  if (merged.current_context.empty() && current && current.IsScalar())
    merged.current_context = current.Scalar();
  if (auto ok = merge_list(root, "clusters", "cluster", file, merged.clusters); !ok) return ok;
  if (auto ok = merge_list(root, "users", "user", file, merged.users); !ok) return ok;
  return merge_list(root, "contexts", "context", file, merged.contexts);
}

Result<Entry> named(const std::map<std::string, Entry>& entries, const char* what, const std::string& name,
                    const std::string& sources) {
  const auto it = entries.find(name);
  if (it == entries.end()) {
    return make_error("kubeconfig " + sources + ": no " + std::string(what) + " named \"" + name + "\"");
  }
  return it->second;
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
  config.insecure_skip_tls_verify = is_set(cluster, "insecure-skip-tls-verify");
  const bool has_ca =
      is_set(cluster, "certificate-authority") || is_set(cluster, "certificate-authority-data");
  if (config.insecure_skip_tls_verify && has_ca) {
    // client-go's validation says the same: verifying with a CA and not verifying contradict.
    return make_error(where + ": insecure-skip-tls-verify together with a certificate-authority: give one");
  }
  if (const std::string proxy_url = scalar(cluster, "proxy-url"); !proxy_url.empty()) {
    auto proxy = parse_proxy_url(proxy_url);
    if (!proxy) return make_error(where + ".proxy-url: " + proxy.error().message);
    config.proxy = std::move(*proxy);
  }
  config.tls_server_name = scalar(cluster, "tls-server-name");
  if (config.insecure_skip_tls_verify) return true;
  auto ca = data_or_file(cluster, "certificate-authority", file, where);
  if (!ca) return ca.error();
  if (ca->empty()) {
    return make_error(where +
                      ": no certificate-authority or certificate-authority-data (the server's "
                      "certificate must be verified, or insecure-skip-tls-verify: true said)");
  }
  config.ca_pem = std::move(*ca);
  if (scalar(cluster, "certificate-authority-data").empty())
    config.ca_file = relative_to(file, scalar(cluster, "certificate-authority"));
  return true;
}

// Refuses the ways of authenticating that are not supported: plugins, basic authentication, impersonation.
Result<bool> check_user_supported(const YAML::Node& user, const std::string& where) {
  if (is_set(user, "auth-provider")) {
    return make_error(
        where +
        ".auth-provider: not supported (kubectl removed the gcp and azure providers in 1.26); use "
        "the exec plugin that replaced it: gke-gcloud-auth-plugin, kubelogin, aws eks get-token");
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
  auto exec = read_exec(user, file, where);
  if (!exec) return exec.error();
  config.exec = std::move(*exec);
  if (config.exec &&
      (!config.token.empty() || is_set(user, "tokenFile") || !config.client_certificate_pem.empty())) {
    return make_error(where +
                      ": exec together with a token, tokenFile or client certificate: give one way to "
                      "authenticate");
  }
  const std::string token_file = scalar(user, "tokenFile");
  if (!token_file.empty()) {
    config.token_file = relative_to(file, token_file);
    if (auto readable = read_small_file(config.token_file, where + ".tokenFile"); !readable) {
      return readable.error();
    }
  }
  return true;
}

// The selected context's cluster and user, with --context, --cluster and --user applied as kubectl applies
// them. `sources` names the files in messages.
Result<ApiConfig> select(const Merged& merged, const KubeconfigSelection& selection,
                         const std::string& sources) {
  const std::string context = selection.context.empty() ? merged.current_context : selection.context;
  if (context.empty())
    return make_error("kubeconfig " + sources + ": no current-context (and no --context given)");
  auto ctx = named(merged.contexts, "context", context, sources);
  if (!ctx) return ctx.error();
  const std::string cluster_name =
      selection.cluster.empty() ? scalar(ctx->value, "cluster") : selection.cluster;
  const std::string user_name = selection.user.empty() ? scalar(ctx->value, "user") : selection.user;
  if (cluster_name.empty()) {
    return make_error("kubeconfig " + sources + ": context \"" + context +
                      "\" names no cluster (give --cluster)");
  }
  auto cluster = named(merged.clusters, "cluster", cluster_name, sources);
  if (!cluster) return cluster.error();

  ApiConfig config;
  config.source = "kubeconfig " + sources + " (context " + context + ")";
  config.namespace_ = scalar(ctx->value, "namespace");
  const std::string cluster_where =
      "kubeconfig " + cluster->file.string() + ": clusters[" + cluster_name + "].cluster";
  if (auto read = read_cluster(cluster->value, cluster->file, cluster_where, config); !read)
    return read.error();
  if (user_name.empty()) return config;  // anonymous: allowed, the API server decides
  auto user = named(merged.users, "user", user_name, sources);
  if (!user) return user.error();
  const std::string user_where = "kubeconfig " + user->file.string() + ": users[" + user_name + "].user";
  if (auto read = read_user(user->value, user->file, user_where, config); !read) return read.error();
  if (config.exec && !config.exec->cluster_info_json.empty()) {
    config.exec->cluster_info_json = exec_cluster_info(cluster->value, config);
  }
  return config;
}

std::string joined(const std::vector<fs::path>& files) {
  std::string out;
  for (const fs::path& file : files) out += (out.empty() ? "" : ", ") + file.string();
  return out;
}

// Parses one file's text into `merged`; errors name the file.
Result<bool> merge_text(std::string_view text, const fs::path& file, Merged& merged) {
  if (text.size() > kMaxConfigFileBytes) {
    return make_error("kubeconfig " + file.string() + " is larger than " +
                      std::to_string(kMaxConfigFileBytes) + " bytes");
  }
  try {
    if (auto ok = merge_file(YAML::Load(std::string(text)), file, merged); !ok) {
      return make_error("kubeconfig " + file.string() + ": " + ok.error().message);
    }
    return true;
  } catch (const YAML::Exception& e) {
    return make_error("kubeconfig " + file.string() + ": " + e.what());
  }
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
  if (auto proxied = use_environment_proxy(config, env); !proxied) return proxied.error();
  return config;
}

Result<ApiConfig> load_kubeconfigs(const std::vector<fs::path>& files, const KubeconfigSelection& selection) {
  Merged merged;
  for (const fs::path& file : files) {
    auto text = read_small_file(file, "kubeconfig");
    if (!text) return text.error();
    if (auto ok = merge_text(*text, file, merged); !ok) return ok.error();
  }
  auto config = select(merged, selection, joined(files));
  if (!config) return config;
  if (auto proxied = use_environment_proxy(*config); !proxied) return proxied.error();
  return config;
}

Result<ApiConfig> load_kubeconfig(const fs::path& file, const std::string& context) {
  return load_kubeconfigs({file}, {context, "", ""});
}

Result<ApiConfig> kubeconfig_from_text(std::string_view text, const fs::path& file,
                                       const std::string& context) {
  Merged merged;
  if (auto ok = merge_text(text, file, merged); !ok) return ok.error();
  return select(merged, {context, "", ""}, file.string());
}

}  // namespace gpuadmit::cluster
