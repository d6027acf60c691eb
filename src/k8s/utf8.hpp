// One RFC 3629 check shared by the JSON reader and writer, so both accept exactly the same strings.
#pragma once

#include <cstddef>

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

}  // namespace gpuadmit::k8s
