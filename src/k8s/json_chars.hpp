// What the JSON reader and writer agree on about the bytes of a string: one RFC 3629 check, so both
// accept exactly the same strings, and one scan for runs of plain ASCII.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuadmit::k8s {

// The length (2 to 4) of the well-formed multi-byte UTF-8 sequence at `p` (whose first byte is >= 0x80),
// or 0 if it is malformed, overlong, a surrogate, beyond U+10FFFF or cut off by `end`.
inline std::ptrdiff_t utf8_sequence_length(const char* p, const char* end) noexcept {
  const auto byte = [p](std::ptrdiff_t i) { return static_cast<unsigned char>(p[i]); };
  const auto in = [](unsigned char b, unsigned char lo, unsigned char hi) { return b >= lo && b <= hi; };
  const unsigned char lead = byte(0);
  std::ptrdiff_t length = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (in(lead, 0xC2, 0xDF)) {
    length = 2;
  } else if (in(lead, 0xE0, 0xEF)) {
    length = 3;
    if (lead == 0xE0) {
      lo = 0xA0;
    }
    if (lead == 0xED) {
      hi = 0x9F;
    }
  } else if (in(lead, 0xF0, 0xF4)) {
    length = 4;
    if (lead == 0xF0) {
      lo = 0x90;
    }
    if (lead == 0xF4) {
      hi = 0x8F;
    }
  } else {
    return 0;
  }
  if (end - p < length || !in(byte(1), lo, hi)) {
    return 0;
  }
  for (std::ptrdiff_t i = 2; i < length; ++i) {
    if (!in(byte(i), 0x80, 0xBF)) {
      return 0;
    }
  }
  return length;
}

// Skips plain ASCII: printable bytes other than '"' and '\\'. Stops at the first byte that needs a look
// (a quote, a backslash, a control character, or a byte >= 0x80). Strings are most of an AdmissionReview,
// so it tests sixteen bytes at a time with SSE2 (part of every x86-64), else eight in a 64-bit word; the
// rest byte by byte.
inline const char* skip_plain_ascii(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  // One signed compare flags control characters and bytes >= 0x80 alike: as int8, both are below ' '.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(' ');
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));  // NOLINT: unaligned load
    const __m128i hits =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                     _mm_cmplt_epi8(bytes, space));
    const auto mask = static_cast<unsigned>(_mm_movemask_epi8(hits));
    if (mask != 0) {
      return p + std::countr_zero(mask);
    }
    p += 16;
  }
#endif
  // Each word test can flag bytes above the first real hit (a borrow runs up), never below it, so on a
  // little-endian machine the lowest flag is the byte.
  constexpr std::uint64_t kOnes = 0x0101010101010101U;
  constexpr std::uint64_t kHigh = 0x8080808080808080U;
  const auto has_zero_byte = [](std::uint64_t w) { return (w - kOnes) & ~w & kHigh; };
  while (end - p >= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, sizeof w);
    const std::uint64_t below_space = (w - kOnes * 0x20U) & ~w & kHigh;  // some byte < 0x20
    const std::uint64_t special = has_zero_byte(w ^ (kOnes * '"')) | has_zero_byte(w ^ (kOnes * '\\'));
    const std::uint64_t flags = below_space | special | (w & kHigh);
    if (flags != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return p + std::countr_zero(flags) / 8;
      }
      break;
    }
    p += 8;
  }
  while (p != end) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') {
      break;
    }
    ++p;
  }
  return p;
}

}  // namespace gpuadmit::k8s
