// Standard base64 (RFC 4648), for a kubeconfig's *-data fields.
#include "gpuadmit/cluster/api_config.hpp"

#include <openssl/evp.h>

namespace gpuadmit::cluster {

Result<std::string> decode_base64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t accumulator = 0;
  int bits = 0;
  std::size_t padding = 0;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return make_error("invalid base64: data after padding");
    std::uint32_t value = 0;
    if (c >= 'A' && c <= 'Z') {
      value = static_cast<std::uint32_t>(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      value = static_cast<std::uint32_t>(c - 'a' + 26);
    } else if (c >= '0' && c <= '9') {
      value = static_cast<std::uint32_t>(c - '0' + 52);
    } else if (c == '+') {
      value = 62;
    } else if (c == '/') {
      value = 63;
    } else {
      return make_error("invalid base64: unexpected character");
    }
    accumulator = (accumulator << 6U) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((accumulator >> static_cast<unsigned>(bits)) & 0xFFU));
    }
  }
  if (padding > 2 || bits >= 6) return make_error("invalid base64: truncated");
  return out;
}

// OpenSSL's block encoder, as the server's certificate code encodes (certs.cpp, certificate_renewal.cpp).
std::string encode_base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // and its NUL
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),  // NOLINT: OpenSSL's types
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace gpuadmit::cluster
