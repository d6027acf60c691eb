// Standard base64 (RFC 4648), for a kubeconfig's *-data fields.
#include "gpuadmit/cluster/api_config.hpp"

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

std::string encode_base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::uint32_t accumulator = 0;
  int bits = 0;
  for (const char c : bytes) {
    accumulator = (accumulator << 8U) | static_cast<unsigned char>(c);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(accumulator >> static_cast<unsigned>(bits)) & 0x3FU]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(accumulator << static_cast<unsigned>(6 - bits)) & 0x3FU]);
  while (out.size() % 4 != 0) out.push_back('=');
  return out;
}

}  // namespace gpuadmit::cluster
