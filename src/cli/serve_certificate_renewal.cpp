// The composition root's half of --renew-secret: the TLS Secret read and patched through the API server the
// cluster view would use, behind server::CertificateSecret.
#include <cctype>

#include "gpuadmit/cli/serve_cluster_view.hpp"
#include "gpuadmit/common/duration.hpp"
#include "gpuadmit/k8s/json_input.hpp"

namespace gpuadmit::cli {
namespace {

// A Secret is small: 1 MiB is etcd's limit for any object.
constexpr k8s::JsonLimits kSecretLimits{1U << 21U, 16};

std::string api_message(const cluster::ApiResponse& response) {
  auto parsed = k8s::parse_json(response.body, kSecretLimits);
  if (parsed && parsed->is_object() && parsed->contains("message") && (*parsed)["message"].is_string())
    return "HTTP " + std::to_string(response.status) + ": " + (*parsed)["message"].get<std::string>();
  return "HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200);
}

class ApiSecret final : public server::CertificateSecret {
 public:
  ApiSecret(std::shared_ptr<cluster::ApiTransport> transport, const std::string& ns, const std::string& name)
      : transport_(std::move(transport)),
        path_("/api/v1/namespaces/" + ns + "/secrets/" + name),
        name_(ns + "/" + name) {}

  Result<nlohmann::json> get(std::stop_token stop) override {
    auto response = transport_->get(path_, std::move(stop));
    if (!response) return response.error();
    if (response->status != 200) return make_error(api_message(*response));
    return k8s::parse_json(response->body, kSecretLimits);
  }
  Result<Written> merge_patch(const nlohmann::json& patch, std::stop_token stop) override {
    auto response = transport_->merge_patch(path_, patch.dump(), std::move(stop));
    if (!response) return response.error();
    if (response->status == 409) return Written::kConflict;
    if (response->status != 200) return make_error(api_message(*response));
    return Written::kPatched;
  }
  [[nodiscard]] std::string name() const override { return name_; }

 private:
  std::shared_ptr<cluster::ApiTransport> transport_;
  std::string path_;
  std::string name_;
};

}  // namespace

// A namespace, Secret or Lease name as the API server allows them (DNS-1123 subdomain; a namespace is also
// one), so that the flag cannot make the request path say something else.
bool object_name(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  for (const char c : text) {
    if (std::islower(static_cast<unsigned char>(c)) == 0 &&
        std::isdigit(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '.')
      return false;
  }
  return std::isalnum(static_cast<unsigned char>(text.front())) != 0 &&
         std::isalnum(static_cast<unsigned char>(text.back())) != 0;
}

Result<server::RenewalSetup> renewal_setup(const std::optional<std::string>& secret,
                                           const std::optional<std::string>& renew_before,
                                           const ClusterViewFlags& flags,
                                           const std::map<std::string, std::string>* env,
                                           const cluster::InClusterPaths& paths) {
  server::RenewalSetup setup;
  if (renew_before) {
    if (!secret) return make_error("--renew-before needs --renew-secret");
    auto parsed = parse_duration(*renew_before);
    if (!parsed) return make_error("--renew-before: " + parsed.error().message);
    setup.policy.renew_before = *parsed;
  }
  if (!secret) return setup;
  const auto slash = secret->find('/');
  const std::string ns = slash == std::string::npos ? std::string() : secret->substr(0, slash);
  const std::string name = slash == std::string::npos ? std::string() : secret->substr(slash + 1);
  if (!object_name(ns) || !object_name(name)) {
    return make_error(
        "--renew-secret wants NAMESPACE/NAME of the TLS Secret (e.g. gpuadmit/gpuadmit-tls), not \"" +
        *secret + "\"");
  }
  if (!flags.kubeconfig && !in_cluster(env)) {
    return make_error("--renew-secret needs --kubeconfig FILE, or KUBERNETES_SERVICE_HOST (in a pod)");
  }
  setup.make = [connect = api_transport_factory(flags, env, paths, "certificate renewal"), ns,
                name](const server::JsonLog& /*log*/) -> Result<std::unique_ptr<server::CertificateSecret>> {
    auto transport = connect();
    if (!transport) return transport.error();
    return std::unique_ptr<server::CertificateSecret>(
        std::make_unique<ApiSecret>(std::move(*transport), ns, name));
  };
  return setup;
}

}  // namespace gpuadmit::cli
