// Standard base64 decoding for checking patches in tests (the server only ever encodes).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gpuadmit::test {

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
