#include "gpuadmit/server/certs.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>
#include <tuple>
#include <variant>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "gpuadmit/tls/openssl_error.hpp"
#include "gpuadmit/tls/openssl_handles.hpp"

namespace gpuadmit::server {
namespace {

using tls::BignumPtr;
using tls::BioPtr;
using tls::EvpPkeyCtxPtr;
using tls::EvpPkeyPtr;
using tls::GeneralNamesPtr;
using tls::serial_hex;
using tls::X509Ptr;

constexpr int kMaxDays = 36500;
constexpr long kSecondsPerDay = 86400;  // NOLINT(google-runtime-int): X509_gmtime_adj takes long
// Covers clocks a little behind ours (the apiserver's, a test client's).
constexpr long kBackdateSeconds = 300;  // NOLINT(google-runtime-int)

Error openssl_error(std::string_view what) {
  return make_error(tls::drain_openssl_errors(what));
}

Result<EvpPkeyPtr> generate_p256_key() {
  const EvpPkeyCtxPtr context(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  if (!context || EVP_PKEY_keygen_init(context.get()) != 1 ||
      EVP_PKEY_CTX_set_group_name(context.get(), "P-256") != 1) {
    return openssl_error("cannot set up P-256 key generation");
  }
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_generate(context.get(), &key) != 1) return openssl_error("cannot generate a P-256 key");
  return EvpPkeyPtr(key);
}

std::string to_pem(X509* certificate) {
  const BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int)
  return std::string(data, static_cast<std::size_t>(size));
}

std::string to_pem(EVP_PKEY* key) {
  const BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);  // NOLINT(google-runtime-int)
  return std::string(data, static_cast<std::size_t>(size));
}

X509Ptr certificate_from_pem(std::string_view pem) {
  const BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

EvpPkeyPtr key_from_pem(std::string_view pem) {
  const BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return EvpPkeyPtr(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

// A positive random 127-bit serial: unique without bookkeeping, within RFC 5280's 20 octets.
bool set_random_serial(X509* certificate) {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) return false;
  bytes[0] &= 0x7FU;
  bytes[0] |= 0x01U;  // never a short serial
  const BignumPtr serial(BN_bin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  return serial && BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(certificate)) != nullptr;
}

bool add_extension(X509* certificate, X509* issuer, int nid, const char* value) {
  X509V3_CTX context;
  X509V3_set_ctx(&context, issuer, certificate, nullptr, nullptr, 0);
  X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &context, nid, value);
  if (extension == nullptr) return false;
  const bool added = X509_add_ext(certificate, extension, -1) == 1;
  X509_EXTENSION_free(extension);
  return added;
}

// The fields every certificate we issue shares: version 3, serial, validity, subject CN, public key.
Result<X509Ptr> new_certificate(const std::string& common_name, int days, EVP_PKEY* key) {
  if (days < 1 || days > kMaxDays)
    return make_error("days must be between 1 and " + std::to_string(kMaxDays));
  X509Ptr certificate(X509_new());
  if (!certificate || X509_set_version(certificate.get(), 2) != 1 || !set_random_serial(certificate.get()) ||
      X509_gmtime_adj(X509_getm_notBefore(certificate.get()), -kBackdateSeconds) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(certificate.get()), kSecondsPerDay * days) == nullptr ||
      X509_set_pubkey(certificate.get(), key) != 1) {
    return openssl_error("cannot build a certificate");
  }
  X509_NAME* subject = X509_get_subject_name(certificate.get());
  const auto* cn = reinterpret_cast<const unsigned char*>(common_name.c_str());  // NOLINT: OpenSSL's byte API
  if (X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, cn, -1, -1, 0) != 1) {
    return openssl_error("cannot set the subject");
  }
  return certificate;
}

bool valid_dns_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  if (name.starts_with("*.")) name.remove_prefix(2);
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

Result<GeneralNamesPtr> subject_alt_names(const ServingSpec& spec) {
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return openssl_error("cannot allocate subjectAltName");
  for (const std::string& dns : spec.dns_names) {
    if (!valid_dns_name(dns)) return make_error("invalid DNS name \"" + dns + "\"");
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_IA5STRING* text = ASN1_IA5STRING_new();
    if (name == nullptr || text == nullptr ||
        ASN1_STRING_set(text, dns.data(), static_cast<int>(dns.size())) != 1) {
      GENERAL_NAME_free(name);
      ASN1_IA5STRING_free(text);
      return openssl_error("cannot add DNS name " + dns);
    }
    GENERAL_NAME_set0_value(name, GEN_DNS, text);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  for (const std::string& ip : spec.ip_addresses) {
    ASN1_OCTET_STRING* address = a2i_IPADDRESS(ip.c_str());
    if (address == nullptr) {
      ERR_clear_error();
      return make_error("invalid IP address \"" + ip + "\"");
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (name == nullptr) {
      ASN1_OCTET_STRING_free(address);
      return openssl_error("cannot add IP address " + ip);
    }
    GENERAL_NAME_set0_value(name, GEN_IPADD, address);
    sk_GENERAL_NAME_push(names.get(), name);
  }
  return names;
}

Result<std::monostate> write_file(const std::filesystem::path& path, std::string_view content, mode_t mode) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    return make_error("cannot write " + temporary.string() + ": " + std::generic_category().message(errno));
  std::size_t written = 0;
  bool ok = ::fchmod(fd, mode) == 0;
  while (ok && written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  const int saved_errno = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok) {
    std::filesystem::remove(temporary);
    return make_error("cannot write " + path.string() + ": " + std::generic_category().message(saved_errno));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return make_error("cannot write " + path.string() + ": " + ec.message());
  return std::monostate{};
}

}  // namespace

Result<PemPair> generate_ca(const CaSpec& spec) {
  auto key = generate_p256_key();
  if (!key) return key.error();
  auto certificate = new_certificate(spec.common_name, spec.days, key->get());
  if (!certificate) return certificate.error();
  X509* cert = certificate->get();
  if (X509_set_issuer_name(cert, X509_get_subject_name(cert)) != 1 ||
      !add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
      !add_extension(cert, cert, NID_subject_key_identifier, "hash") ||
      X509_sign(cert, key->get(), EVP_sha256()) == 0) {
    return openssl_error("cannot sign the CA certificate");
  }
  return PemPair{to_pem(cert), to_pem(key->get())};
}

Result<PemPair> generate_serving_certificate(const PemPair& ca, const ServingSpec& spec) {
  if (spec.dns_names.empty() && spec.ip_addresses.empty()) {
    return make_error("a serving certificate needs at least one DNS name or IP address");
  }
  const X509Ptr ca_certificate = certificate_from_pem(ca.certificate);
  const EvpPkeyPtr ca_key = key_from_pem(ca.private_key);
  if (!ca_certificate || !ca_key) return openssl_error("cannot read the CA certificate or key");
  auto names = subject_alt_names(spec);
  if (!names) return names.error();
  auto key = generate_p256_key();
  if (!key) return key.error();
  const std::string common_name =
      !spec.common_name.empty()
          ? spec.common_name
          : (!spec.dns_names.empty() ? spec.dns_names.front() : spec.ip_addresses.front());
  auto certificate = new_certificate(common_name, spec.days, key->get());
  if (!certificate) return certificate.error();
  X509* cert = certificate->get();
  if (X509_set_issuer_name(cert, X509_get_subject_name(ca_certificate.get())) != 1 ||
      !add_extension(cert, ca_certificate.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension(cert, ca_certificate.get(), NID_key_usage, "critical,digitalSignature") ||
      !add_extension(cert, ca_certificate.get(), NID_ext_key_usage,
                     spec.client_auth ? "serverAuth,clientAuth" : "serverAuth") ||
      !add_extension(cert, ca_certificate.get(), NID_subject_key_identifier, "hash") ||
      !add_extension(cert, ca_certificate.get(), NID_authority_key_identifier, "keyid:always") ||
      X509_add1_ext_i2d(cert, NID_subject_alt_name, names->get(), 0, X509V3_ADD_DEFAULT) != 1 ||
      X509_sign(cert, ca_key.get(), EVP_sha256()) == 0) {
    return openssl_error("cannot sign the serving certificate");
  }
  return PemPair{to_pem(cert), to_pem(key->get())};
}

Result<CertificateFiles> write_certificate_files(const std::filesystem::path& directory,
                                                 std::string_view ca_pem, const PemPair& serving) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return make_error("cannot create " + directory.string() + ": " + ec.message());
  CertificateFiles files{directory / "ca.crt", directory / "tls.crt", directory / "tls.key"};
  for (const auto& [path, content, mode] :
       {std::tuple{files.ca, ca_pem, 0644U},
        std::tuple{files.certificate, std::string_view(serving.certificate), 0644U},
        std::tuple{files.private_key, std::string_view(serving.private_key), 0600U}}) {
    auto written = write_file(path, content, static_cast<mode_t>(mode));
    if (!written) return written.error();
  }
  return files;
}

std::string ca_bundle(std::string_view ca_pem) {
  std::string out(4 * ((ca_pem.size() + 2) / 3) + 1, '\0');
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): OpenSSL's byte API
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(ca_pem.data()), static_cast<int>(ca_pem.size()));
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return out;
}

std::string certificate_serial(std::string_view pem) {
  const X509Ptr certificate = certificate_from_pem(pem);
  return certificate ? serial_hex(certificate.get()) : std::string();
}

Result<ServingSpec> serving_spec_of(std::string_view pem) {
  const X509Ptr certificate = certificate_from_pem(pem);
  if (!certificate) return make_error("not a PEM certificate");
  ServingSpec spec;
  const GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate.get(), NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) {
      const ASN1_IA5STRING* dns = name->d.dNSName;
      spec.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),  // NOLINT
                                  static_cast<std::size_t>(ASN1_STRING_length(dns)));
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      std::array<char, 64> text{};
      const int family = ASN1_STRING_length(ip) == 4 ? AF_INET : AF_INET6;
      if (inet_ntop(family, ASN1_STRING_get0_data(ip), text.data(), text.size()) != nullptr)
        spec.ip_addresses.emplace_back(text.data());
    }
  }
  if (spec.dns_names.empty() && spec.ip_addresses.empty())
    return make_error("the certificate names no DNS name or IP address");
  std::array<char, 256> cn{};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(certificate.get()), NID_commonName, cn.data(),
                                static_cast<int>(cn.size())) > 0)
    spec.common_name = cn.data();
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(certificate.get()),
                     X509_get0_notAfter(certificate.get())) != 1)
    return make_error("the certificate's validity cannot be read");
  // To the nearest day: notBefore is backdated a few minutes (kBackdateSeconds), which must not grow the
  // lifetime by a day at each renewal.
  constexpr int kHalfDay = 43'200;
  spec.days = std::max(1, days + (seconds >= kHalfDay ? 1 : 0));
  return spec;
}

Result<std::int64_t> certificate_not_after(std::string_view pem) {
  const X509Ptr certificate = certificate_from_pem(pem);
  if (!certificate) return make_error("not a PEM certificate");
  const auto seconds = tls::not_after_seconds(certificate.get());
  if (!seconds) return make_error("the certificate's notAfter cannot be read");
  return *seconds;
}

}  // namespace gpuadmit::server
