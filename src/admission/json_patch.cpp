#include "gpuadmit/admission/json_patch.hpp"

#include <array>
#include <cstdint>

namespace gpuadmit::admission {

void append_base64(std::string& out, std::string_view bytes) {
  static constexpr std::array<char, 64> kAlphabet{
      'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P',
      'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'a', 'b', 'c', 'd', 'e', 'f',
      'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v',
      'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '+', '/'};
  // The output is sized once and written through a pointer: a patch is encoded on every /mutate that
  // changes something, and appending a character at a time cost more than the encoding.
  const std::size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4);
  char* p = out.data() + start;
  const auto at = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k]));
  };
  const auto put = [&p](std::uint32_t sextet) { *p++ = kAlphabet[sextet & 63U]; };
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t n = (at(i) << 16U) | (at(i + 1) << 8U) | at(i + 2);
    put(n >> 18U);
    put(n >> 12U);
    put(n >> 6U);
    put(n);
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t n = at(i) << 16U;
    put(n >> 18U);
    put(n >> 12U);
    *p++ = '=';
    *p++ = '=';
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t n = (at(i) << 16U) | (at(i + 1) << 8U);
    put(n >> 18U);
    put(n >> 12U);
    put(n >> 6U);
    *p++ = '=';
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  append_base64(out, bytes);
  return out;
}

}  // namespace gpuadmit::admission
