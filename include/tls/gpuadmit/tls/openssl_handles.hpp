// Owning handles for OpenSSL objects, so every early return frees what was allocated.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace gpuadmit::tls {

template <auto Free>
struct OpenSslDeleter {
  template <typename T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};

using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<&BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslDeleter<&BN_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<&EVP_PKEY_free>>;
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, OpenSslDeleter<&EVP_PKEY_CTX_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<&X509_free>>;
using X509NamePtr = std::unique_ptr<X509_NAME, OpenSslDeleter<&X509_NAME_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, OpenSslDeleter<&GENERAL_NAMES_free>>;

// OPENSSL_free is a macro; this is the function it names.
inline void free_openssl_string(char* p) noexcept {
  OPENSSL_free(p);
}
using OpenSslString = std::unique_ptr<char, OpenSslDeleter<&free_openssl_string>>;

// Upper-case hex of the certificate's serial number ("" if it has none).
inline std::string serial_hex(const X509* certificate) {
  const BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(certificate), nullptr));
  if (!serial) return {};
  const OpenSslString hex(BN_bn2hex(serial.get()));
  return hex ? std::string(hex.get()) : std::string();
}

// The certificate's notAfter as seconds since the Unix epoch; nullopt if it cannot be read.
inline std::optional<std::int64_t> not_after_seconds(const X509* certificate) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &tm) != 1) return std::nullopt;
  return static_cast<std::int64_t>(timegm(&tm));
}

}  // namespace gpuadmit::tls
