// Standard base64 for tests, written apart from the server's (OpenSSL's) so that a test checking what the
// server encoded, or building a Secret's data for it to decode, does not share its bugs.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuadmit::test {

inline std::string base64_encode(std::string_view bytes) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    unsigned bits = 0;
    for (std::size_t j = 0; j < 3; ++j)
      bits = (bits << 8U) | (j < n ? static_cast<unsigned char>(bytes[i + j]) : 0U);
    for (std::size_t j = 0; j < 4; ++j) out += j <= n ? kAlphabet[(bits >> (18U - 6U * j)) & 0x3FU] : '=';
  }
  return out;
}

inline std::string base64_decode(std::string_view text) {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) throw std::invalid_argument("base64 length is not a multiple of 4");
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    const auto value = kAlphabet.find(c);
    if (value == std::string_view::npos) throw std::invalid_argument("not standard base64");
    bits = (bits << 6U) | static_cast<unsigned>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> static_cast<unsigned>(count)) & 0xFFU);
    }
  }
  return out;
}

}  // namespace gpuadmit::test
