#include "support/test_webhook.hpp"

#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "gpuadmit/config/yaml_documents.hpp"
#include "support/fixtures.hpp"

namespace gpuadmit::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpuadmit-it-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ProjectedDir::ProjectedDir(std::filesystem::path root) : root_(std::move(root)) {
  std::filesystem::create_directories(root_);
}

void ProjectedDir::write(const std::map<std::string, std::string>& files) {
  namespace fs = std::filesystem;
  const std::string name = "..gen_" + std::to_string(++generation_);
  fs::create_directory(root_ / name);
  for (const auto& [file, content] : files) {
    std::ofstream(root_ / name / file, std::ios::binary) << content;
  }
  fs::create_symlink(name, root_ / "..data_tmp");
  fs::rename(root_ / "..data_tmp", root_ / "..data");  // the atomic step
  for (const auto& [file, content] : files) {
    if (!fs::is_symlink(root_ / file)) fs::create_symlink(fs::path("..data") / file, root_ / file);
  }
  if (generation_ > 1) fs::remove_all(root_ / ("..gen_" + std::to_string(generation_ - 1)));
}

server::PemPair make_serving(const server::PemPair& ca) {
  auto serving = server::generate_serving_certificate(ca, {{"localhost"}, {"127.0.0.1"}, 1, {}});
  if (!serving) throw std::runtime_error(serving.error().message);
  return *serving;
}

TestCertificates make_certificates() {
  // Outlives the serving certificate, as a real CA does (a renewal refuses a CA expiring before it).
  auto ca = server::generate_ca({"gpuadmit-test-ca", 2});
  if (!ca) throw std::runtime_error(ca.error().message);
  return {*ca, make_serving(*ca)};
}

TestWebhook::TestWebhook(TestWebhookOptions options)
    : cert_dir_(temp_.path() / "certs"),
      policy_dir_(temp_.path() / "policy"),
      certificates_(make_certificates()) {
  write_certificate(certificates_.serving);
  server::WebhookConfig config;
  config.server.host = "127.0.0.1";
  config.server.port = 0;
  config.server.threads = 2;
  config.server.drain_period = std::chrono::milliseconds(500);
  config.server.shutdown_grace = std::chrono::milliseconds(5'000);
  config.tls = {cert_dir_.file("tls.crt"), cert_dir_.file("tls.key"), std::nullopt};
  if (!options.client_ca_pem.empty()) {
    cert_dir_.write({{"tls.crt", certificates_.serving.certificate},
                     {"tls.key", certificates_.serving.private_key},
                     {"client-ca.crt", options.client_ca_pem}});
    config.tls.client_ca = cert_dir_.file("client-ca.crt");
  }
  if (options.metrics_port) {
    config.metrics_server = config.server;
    config.metrics_server->threads = 1;
  }
  // Tests trigger checks themselves (check_files_now), so the poller must not race them.
  config.reload_interval = std::chrono::hours(1);
  if (!options.policy_yaml.empty()) {
    write_policy(options.policy_yaml);
    config.policy_file = policy_path();
  }
  if (options.configure) options.configure(config);
  auto webhook = server::Webhook::create(std::move(config), options.log.value_or(server::JsonLog::discard()));
  if (!webhook) throw std::runtime_error("webhook: " + webhook.error().message);
  webhook_ = std::move(*webhook);
  webhook_->start();
}

TestWebhook::~TestWebhook() {
  webhook_->stop_now();
  webhook_->wait();
}

HttpsClient TestWebhook::client(ClientOptions options) const {
  if (options.ca_pem.empty()) options.ca_pem = certificates_.ca.certificate;
  return HttpsClient("127.0.0.1", port(), std::move(options));
}

server::PemPair TestWebhook::rotate_certificate() {
  server::PemPair next = make_serving(certificates_.ca);
  write_certificate(next);
  return next;
}

void TestWebhook::write_certificate(const server::PemPair& pair) {
  cert_dir_.write({{"tls.crt", pair.certificate}, {"tls.key", pair.private_key}});
}

void TestWebhook::write_policy(const std::string& yaml) {
  policy_dir_.write({{"policy.yaml", yaml}});
}

double TestWebhook::metric(const std::string& series) const {
  const std::string text = webhook_->metrics().render();
  const std::string prefix = series + " ";
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = text.find('\n', pos);
    const std::string_view line(text.data() + pos, (end == std::string::npos ? text.size() : end) - pos);
    if (line.starts_with(prefix)) return std::stod(std::string(line.substr(prefix.size())));
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return 0;
}

nlohmann::json fixture_pod(const std::string& name) {
  return fixture("pods/" + name + ".yaml");
}

}  // namespace gpuadmit::test
