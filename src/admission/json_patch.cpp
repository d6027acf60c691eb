#include "gpuadmit/admission/json_patch.hpp"

#include <array>

namespace gpuadmit::admission {

std::string base64_encode(std::string_view bytes) {
  static constexpr std::array<char, 64> kAlphabet{
      'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V',
      'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r',
      's', 't', 'u', 'v', 'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', '/'};
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t n = (at(i) << 16U) | (at(i + 1) << 8U) | at(i + 2);
    out += kAlphabet.at((n >> 18U) & 63U);
    out += kAlphabet.at((n >> 12U) & 63U);
    out += kAlphabet.at((n >> 6U) & 63U);
    out += kAlphabet.at(n & 63U);
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t n = at(i) << 16U;
    out += kAlphabet.at((n >> 18U) & 63U);
    out += kAlphabet.at((n >> 12U) & 63U);
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t n = (at(i) << 16U) | (at(i + 1) << 8U);
    out += kAlphabet.at((n >> 18U) & 63U);
    out += kAlphabet.at((n >> 12U) & 63U);
    out += kAlphabet.at((n >> 6U) & 63U);
    out += '=';
  }
  return out;
}

}  // namespace gpuadmit::admission
