// An in-process webhook on 127.0.0.1:0 with freshly generated certificates, laid out the way the kubelet
// mounts a Secret (files behind a ..data symlink that is swapped atomically), plus the clients and reviews
// the integration tests use.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpuadmit/server/certs.hpp"
#include "gpuadmit/server/webhook.hpp"
#include "support/eventually.hpp"
#include "support/https_client.hpp"
#include "support/reviews.hpp"

namespace gpuadmit::test {

// A temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Kubernetes' AtomicWriter: DIR/<name> -> ..data/<name>, ..data -> a timestamped directory, and an update
// writes a new directory and renames a fresh symlink over ..data.
class ProjectedDir {
 public:
  explicit ProjectedDir(std::filesystem::path root);
  void write(const std::map<std::string, std::string>& files);
  [[nodiscard]] std::filesystem::path file(const std::string& name) const { return root_ / name; }

 private:
  std::filesystem::path root_;
  int generation_ = 0;
};

struct TestCertificates {
  server::PemPair ca;
  server::PemPair serving;
};
// A CA and a serving certificate for localhost and 127.0.0.1.
TestCertificates make_certificates();
server::PemPair make_serving(const server::PemPair& ca);

struct TestWebhookOptions {
  std::function<void(server::WebhookConfig&)> configure{};  // adjust limits, drain, review function...
  std::string policy_yaml{};                                // non-empty: served from a projected policy file
  std::optional<server::JsonLog> log{};                     // unset: discarded
  std::string client_ca_pem{};                              // non-empty: served as --client-ca-file
  bool metrics_port = false;                                // --metrics-listen 127.0.0.1:0
};

class TestWebhook {
 public:
  explicit TestWebhook(TestWebhookOptions options = {});
  TestWebhook(const TestWebhook&) = delete;
  TestWebhook& operator=(const TestWebhook&) = delete;
  ~TestWebhook();

  server::Webhook& webhook() { return *webhook_; }
  [[nodiscard]] std::uint16_t port() const { return webhook_->port(); }
  [[nodiscard]] std::uint16_t metrics_port() const { return webhook_->metrics_port(); }
  [[nodiscard]] HttpsClient client(ClientOptions options = {}) const;
  [[nodiscard]] const TestCertificates& certificates() const { return certificates_; }

  // Swaps in a new serving certificate from the same CA (what cert-manager does); returns it.
  server::PemPair rotate_certificate();
  void write_certificate(const server::PemPair& pair);
  void write_policy(const std::string& yaml);
  [[nodiscard]] std::filesystem::path policy_path() const { return policy_dir_.file("policy.yaml"); }

  // One sample of a counter or gauge from /metrics text (0 when absent).
  [[nodiscard]] double metric(const std::string& series) const;

 private:
  TempDir temp_;
  ProjectedDir cert_dir_;
  ProjectedDir policy_dir_;
  TestCertificates certificates_;
  std::unique_ptr<server::Webhook> webhook_;
};

// A pod from tests/fixtures/pods.
nlohmann::json fixture_pod(const std::string& name);

}  // namespace gpuadmit::test
