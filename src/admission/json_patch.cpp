#include "gpuadmit/admission/json_patch.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuadmit::admission {

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The two characters of every 12-bit value (8 KiB): half as many lookups and stores as one per sextet.
constexpr std::array<std::array<char, 2>, 4096> kPairs = [] {
  std::array<std::array<char, 2>, 4096> pairs{};
  for (std::size_t v = 0; v < pairs.size(); ++v) pairs[v] = {kAlphabet[v >> 6U], kAlphabet[v & 63U]};
  return pairs;
}();

}  // namespace

void append_base64(std::string& out, std::string_view bytes) {
  // The output is sized once and written through a pointer: a patch is encoded on every /mutate that
  // changes something, and appending a character at a time would check the string's capacity per character.
  const std::size_t start = out.size();
  out.resize(start + (bytes.size() + 2) / 3 * 4);
  char* p = out.data() + start;
  const auto at = [&](std::size_t k) {
    return static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[k]));
  };
  const auto put_pair = [&p](std::uint64_t twelve_bits) {
    const auto& pair = kPairs[twelve_bits & 4095U];
    std::memcpy(p, pair.data(), 2);
    p += 2;
  };
  std::size_t i = 0;
  // Six bytes (eight characters) per step, read as one big-endian word while eight bytes remain.
  for (; i + 8 <= bytes.size(); i += 6) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes.data() + i, sizeof word);
    if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
    put_pair(word >> 52U);
    put_pair(word >> 40U);
    put_pair(word >> 28U);
    put_pair(word >> 16U);
  }
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint64_t n = (at(i) << 16U) | (at(i + 1) << 8U) | at(i + 2);
    put_pair(n >> 12U);
    put_pair(n);
  }
  const auto put = [&p](std::uint64_t sextet) { *p++ = kAlphabet[sextet & 63U]; };
  if (i + 1 == bytes.size()) {
    const std::uint64_t n = at(i) << 16U;
    put(n >> 18U);
    put(n >> 12U);
    *p++ = '=';
    *p++ = '=';
  } else if (i + 2 == bytes.size()) {
    const std::uint64_t n = (at(i) << 16U) | (at(i + 1) << 8U);
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
