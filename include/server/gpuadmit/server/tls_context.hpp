// Server TLS: TLS 1.2 and 1.3 only, ECDHE with AEAD ciphers for 1.2 (what the apiserver's Go client offers),
// no compression, no renegotiation. The serving pair comes from files that Kubernetes may rotate at any
// time; new handshakes use the newest valid pair, connections already open keep the one they started with.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

#include "gpuadmit/common/result.hpp"
#include "gpuadmit/common/shared_slot.hpp"
#include "gpuadmit/server/reload.hpp"

namespace gpuadmit::server {

struct TlsFiles {
  std::filesystem::path certificate;  // PEM chain: leaf first, then intermediates
  std::filesystem::path private_key;  // PEM
};

// Builds a server context from PEM text and checks that the key belongs to the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> make_server_context(std::string_view certificate_chain_pem,
                                                                       std::string_view private_key_pem);

// "serial=… notAfter=…" of the context's leaf certificate, for logs.
std::string describe_certificate(boost::asio::ssl::context& context);
// The leaf certificate's notAfter in seconds since the Unix epoch (for the expiry metric).
std::optional<std::int64_t> certificate_not_after(boost::asio::ssl::context& context);

class TlsContextStore {
 public:
  static Result<std::unique_ptr<TlsContextStore>> open(TlsFiles files);

  [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> current() const;
  [[nodiscard]] const TlsFiles& files() const noexcept { return files_; }

  // Re-reads both files; a changed, valid pair replaces the current context, an invalid one is refused.
  ReloadReport reload_if_changed();

 private:
  TlsContextStore(TlsFiles files, std::string seen, std::shared_ptr<boost::asio::ssl::context> context);

  const TlsFiles files_;
  std::mutex reload_mutex_;
  std::string last_seen_;  // certificate + key content of the last attempt; guarded by reload_mutex_
  SharedSlot<boost::asio::ssl::context> current_;
};

}  // namespace gpuadmit::server
