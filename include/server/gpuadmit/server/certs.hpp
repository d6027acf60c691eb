// Certificates through OpenSSL's API (no openssl CLI): a CA and a serving certificate it signs, both ECDSA
// P-256 with SHA-256 signatures. The serving certificate carries the names in subjectAltName (Go ignores
// the CN since 1.15), serverAuth, and no CA rights. Used by `gpuadmit certs generate`, by `serve
// --dev-self-signed`, and by the tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpuadmit/common/result.hpp"

namespace gpuadmit::server {

struct PemPair {
  std::string certificate;
  std::string private_key;  // PKCS#8
};

struct CaSpec {
  std::string common_name = "gpuadmit-ca";
  int days = 3650;
};

struct ServingSpec {
  std::vector<std::string> dns_names;     // e.g. gpuadmit.gpuadmit-system.svc
  std::vector<std::string> ip_addresses;  // IPv4 or IPv6 literals
  int days = 365;
  std::string common_name;  // empty: the first DNS name, else the first IP
  // Also clientAuth: a certificate a caller of gpuadmit presents (--client-ca-file; the tests sign one).
  bool client_auth = false;
};

Result<PemPair> generate_ca(const CaSpec& spec);
Result<PemPair> generate_serving_certificate(const PemPair& ca, const ServingSpec& spec);

struct CertificateFiles {
  std::filesystem::path ca;           // ca.crt: what goes (base64) into the webhook's caBundle
  std::filesystem::path certificate;  // tls.crt
  std::filesystem::path private_key;  // tls.key, mode 0600
};

// Writes ca.crt, tls.crt and tls.key into `directory` (created if missing), the names a Kubernetes TLS
// Secret mounts. Each file is written to a temporary name and renamed, so a reader never sees half a file.
Result<CertificateFiles> write_certificate_files(const std::filesystem::path& directory,
                                                 std::string_view ca_pem, const PemPair& serving);

// Standard base64 of the CA certificate PEM: the value of a webhook's clientConfig.caBundle.
std::string ca_bundle(std::string_view ca_pem);

// Upper-case hex serial of the first certificate in a PEM text; "" if none can be read.
std::string certificate_serial(std::string_view pem);

// notAfter of the first certificate in a PEM text, in seconds since the Unix epoch.
Result<std::int64_t> certificate_not_after(std::string_view pem);
// What a serving certificate was made for: its DNS and IP SANs, its CN, and its lifetime in days (to the
// nearest day), so that a renewal can ask for the same (certificate_renewal.hpp).
Result<ServingSpec> serving_spec_of(std::string_view pem);

}  // namespace gpuadmit::server
