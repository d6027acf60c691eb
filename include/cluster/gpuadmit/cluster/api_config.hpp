// How to reach the API server: in-cluster (service-account token and CA mounted into the pod) or from a
// kubeconfig file (development, the e2e suite, `gpuadmit cluster dump`). Everything is loaded and checked
// up front, so a bad configuration fails at start-up with a message naming the file and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/cluster/exec_credential.hpp"
#include "gpuadmit/cluster/proxy.hpp"
#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

struct ApiConfig {
  std::string host;  // DNS name or IP literal (IPv6 without brackets)
  std::uint16_t port = 443;
  std::string path_prefix;  // from a server URL such as https://proxy/k8s/clusters/c1; "" or "/..." without
                            // '/' at the end
  std::string tls_server_name;  // the name the serving certificate must carry; "" means `host`
  std::string ca_pem;           // trusted CAs; empty only with insecure_skip_tls_verify
  // A kubeconfig's insecure-skip-tls-verify: the API server's certificate is not verified. The CLI warns on
  // every run; serve refuses it (its verdicts rest on what it reads).
  bool insecure_skip_tls_verify = false;
  // Where ca_pem came from, when a file: re-read before each connection, so a rotated cluster CA (the
  // kubelet updates the service account's ca.crt from kube-root-ca.crt) is trusted without a restart.
  std::filesystem::path ca_file;
  std::string client_certificate_pem;  // with client_key_pem, or both empty
  std::string client_key_pem;
  std::string token;                 // a fixed bearer token (kubeconfig `token`)
  std::filesystem::path token_file;  // re-read for every request: bound tokens rotate (about hourly)
  std::optional<ExecPlugin> exec;    // a credential plugin: its token or certificate, fetched when needed
  std::optional<Proxy> proxy;    // reached through a CONNECT tunnel: proxy-url, else HTTPS_PROXY
  std::string source;                // for messages: "in-cluster" or "kubeconfig FILE (context C)"
  std::string namespace_;  // the kubeconfig context's namespace ("": none), kubectl's default for -n

  [[nodiscard]] std::string url() const;  // https://host:port/prefix
  // The host as a URL or a Host header writes it: an IPv6 address in brackets.
  [[nodiscard]] std::string bracketed_host() const;
};

// Where a pod finds its service-account credentials; tests point these elsewhere.
struct InClusterPaths {
  std::filesystem::path token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::filesystem::path ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};

// The service-account configuration, from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT in `env`
// (the process environment when empty) and the files in `paths`.
Result<ApiConfig> in_cluster_config(const InClusterPaths& paths = {},
                                    const std::map<std::string, std::string>* env = nullptr);

// --context, --cluster and --user, as kubectl applies them: the context (else current-context), and the
// cluster and user that replace the context's.
struct KubeconfigSelection {
  std::string context;
  std::string cluster;
  std::string user;
};

// The selected context of kubeconfig files merged as kubectl merges them: the first file to set
// current-context, or to name a cluster, user or context, wins, and each entry is taken whole from that file,
// whose directory anchors its relative paths. Supported: server URL (https only),
// certificate-authority(-data), tls-server-name, client-certificate(-data) + client-key(-data), token,
// tokenFile, exec credential plugins (client.authentication.k8s.io/v1 and v1beta1, returning a token or a
// client certificate), proxy-url, the
// context's namespace, insecure-skip-tls-verify (without a CA, as client-go requires). Refused with a message
// naming the file and field: auth-provider, username/password, impersonation. A cluster's proxy-url (http://)
// is used; without one, HTTPS_PROXY and NO_PROXY of this process's environment apply (use_environment_proxy).
Result<ApiConfig> load_kubeconfigs(const std::vector<std::filesystem::path>& files,
                                   const KubeconfigSelection& selection);
// One file (`context` overrides its current-context).
Result<ApiConfig> load_kubeconfig(const std::filesystem::path& file, const std::string& context = {});
// The same, on a kubeconfig's text already read: `file` names it in messages and anchors relative paths.
Result<ApiConfig> kubeconfig_from_text(std::string_view text, const std::filesystem::path& file,
                                       const std::string& context = {});

// Which kubeconfig files kubectl reads: --kubeconfig FILE alone (it must exist); else the files $KUBECONFIG
// lists (':'-separated; empty and missing entries skipped, as client-go skips them); else
// HOME/.kube/config if it exists; else none, and the in-cluster service account is used.
struct KubeconfigFiles {
  std::vector<std::filesystem::path> paths;
  std::vector<std::filesystem::path> missing;  // $KUBECONFIG entries that do not exist, for messages
};
KubeconfigFiles kubeconfig_files(const std::optional<std::string>& flag, std::string_view kubeconfig_env,
                                 const std::filesystem::path& home);

// kubectl's rules on this process's $KUBECONFIG and $HOME, else the in-cluster configuration.
Result<ApiConfig> resolve_api_config(const std::optional<std::string>& kubeconfig,
                                     const KubeconfigSelection& selection = {},
                                     const InClusterPaths& paths = {});

// For a config that names no proxy: the one the environment gives its host (proxy_from_environment; `env`
// nullptr: this process's), as client-go's default transport takes it.
Result<bool> use_environment_proxy(ApiConfig& config,
                                   const std::map<std::string, std::string>* env = nullptr);

// Standard base64 (RFC 4648) with or without padding; whitespace is ignored, anything else is an error.
Result<std::string> decode_base64(std::string_view text);
std::string encode_base64(std::string_view bytes);

}  // namespace gpuadmit::cluster
