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
  // --client-ca-file: the CAs whose client certificates a caller may present (re-read with the pair).
  std::optional<std::filesystem::path> client_ca;
};

// Builds a server context from PEM text and checks that the key belongs to the certificate. With
// `client_ca_pem`, the server asks each client for a certificate and verifies one that is presented against
// those CAs (a bad one fails the handshake), but does not require one: the kubelet's probes have none, and
// the review handlers answer 401 to a caller without (Request::client_certificate).
Result<std::shared_ptr<boost::asio::ssl::context>> make_server_context(std::string_view certificate_chain_pem,
                                                                       std::string_view private_key_pem,
                                                                       std::string_view client_ca_pem = {});

// "serial=… notAfter=…" of the context's leaf certificate, for logs.
std::string describe_certificate(boost::asio::ssl::context& context);
// The leaf certificate's notAfter in seconds since the Unix epoch (for the expiry metric).
std::optional<std::int64_t> certificate_not_after(boost::asio::ssl::context& context);

class TlsContextStore {
 public:
  static Result<std::unique_ptr<TlsContextStore>> open(TlsFiles files);

  // The context new handshakes use: with a client CA, one that asks for a client certificate.
  [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> current() const;
  // The same pair, never asking for a client certificate (the --metrics-listen port).
  [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> current_without_client_auth() const;
  [[nodiscard]] const TlsFiles& files() const noexcept { return files_; }

  // Re-reads both files; a changed, valid pair replaces the current context, an invalid one is refused.
  ReloadReport reload_if_changed();
  // Serves this pair from the next handshake on (a renewal, certificate_renewer.hpp), with the client CA
  // last read. The files are not written: they follow when the kubelet refreshes the mounted Secret, and
  // reload_if_changed() then swaps in the same pair again.
  ReloadReport install(const std::string& certificate, const std::string& private_key);

 private:
  struct Contexts {
    std::shared_ptr<boost::asio::ssl::context> asking;  // asks for a client certificate (with a client CA)
    std::shared_ptr<boost::asio::ssl::context> open;    // never asks
  };
  // Both contexts of the files' current content; `seen` receives that content (for change detection),
  // `client_ca` the client CA file's.
  Result<Contexts> load(std::string& seen, std::string& client_ca) const;
  Result<Contexts> contexts_of(std::string_view certificate, std::string_view key,
                               const std::string& client_ca, const std::string& source) const;

  explicit TlsContextStore(TlsFiles files);

  const TlsFiles files_;
  std::mutex reload_mutex_;
  std::string
      last_seen_;  // certificate + key (+ client CA) content of the last attempt; guarded by reload_mutex_
  std::string client_ca_;  // the client CA file's content in use; guarded by reload_mutex_
  SharedSlot<boost::asio::ssl::context> current_;
  SharedSlot<boost::asio::ssl::context> open_;
};

}  // namespace gpuadmit::server
