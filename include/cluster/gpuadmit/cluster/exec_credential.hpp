// Client-go credential plugins (a kubeconfig user's `exec`; the login of GKE's gke-gcloud-auth-plugin,
// EKS's `aws eks get-token` and AKS's kubelogin): run the command, read the ExecCredential it prints, keep
// its token until expirationTimestamp.
// https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::cluster {

enum class InteractiveMode { kNever, kIfAvailable, kAlways };

struct ExecPlugin {
  std::string command;  // a name looked up on PATH, or a path (relative ones resolved against the kubeconfig)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to this process's environment
  std::string api_version;                               // client.authentication.k8s.io/v1 or v1beta1
  std::string install_hint;
  InteractiveMode interactive_mode = InteractiveMode::kIfAvailable;
  std::string where;  // for messages: "kubeconfig FILE: users[NAME].user.exec"
  // With provideClusterInfo: the spec.cluster object of KUBERNETES_EXEC_INFO (JSON); "" without.
  std::string cluster_info_json;
};

struct ExecCredential {
  std::string token;  // sent as a bearer token; may be empty when a client certificate is given
  std::optional<std::chrono::system_clock::time_point> expires;  // none: valid until a 401
  std::string client_certificate_pem;  // presented in the TLS handshake, with its key; both or neither
  std::string client_key_pem;
  bool operator==(const ExecCredential&) const = default;
};

// The plugin's standard output, checked as client-go checks it: kind ExecCredential of the plugin's
// apiVersion, a status with a token or a client certificate and key (PEM; both, not one), or both, and an
// RFC 3339 expirationTimestamp when given.
Result<ExecCredential> parse_exec_credential(std::string_view output, const ExecPlugin& plugin);

// KUBERNETES_EXEC_INFO: apiVersion, kind and spec {interactive, cluster when provided}.
std::string exec_info_json(const ExecPlugin& plugin, bool interactive);

// Runs the plugin once: its standard error goes to ours (its prompts and messages), its standard input is
// ours when interactive, else /dev/null; its output is read up to 1 MiB within `timeout`. A missing
// command gives its installHint.
Result<ExecCredential> run_exec_plugin(const ExecPlugin& plugin, std::chrono::seconds timeout);

// The plugin's credential, run again when it has expired (10 s early) or after the API server refused it.
// Thread-safe: the reflectors share one.
class ExecCredentialCache {
 public:
  explicit ExecCredentialCache(ExecPlugin plugin, std::chrono::seconds timeout = std::chrono::seconds(60))
      : plugin_(std::move(plugin)), timeout_(timeout) {}
  Result<ExecCredential> credential();
  // The API server answered 401 to a request made with `sent`: the next credential() runs the plugin again
  // (unless another request has already fetched a new one).
  void refused(const ExecCredential& sent);
  [[nodiscard]] int runs() const;

 private:
  ExecPlugin plugin_;
  std::chrono::seconds timeout_;
  mutable std::mutex mutex_;
  std::optional<ExecCredential> cached_;  // guarded by mutex_
  int runs_ = 0;                          // guarded by mutex_
};

}  // namespace gpuadmit::cluster
