#pragma once
// UTF-8 well-formedness of input text (YAML 1.2 §5.2 and XML 1.0 §2.2 take
// UTF-8 here; the JSON we write must be UTF-8, RFC 8259 §8.1).
#include <cstddef>
#include <string_view>

namespace fabricsim {

/// Offset of the first byte of `s` that does not begin or continue a
/// well-formed UTF-8 sequence (Unicode 15, Table 3-7: no overlong forms, no
/// surrogates U+D800..U+DFFF, nothing above U+10FFFF), or
/// std::string_view::npos if `s` is all well-formed. O(size), never throws.
inline std::size_t first_invalid_utf8(std::string_view s) noexcept {
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b >= 0xC2 && b <= 0xDF) {
      len = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      len = 3;
      if (b == 0xE0) lo = 0xA0;  // overlong below U+0800
      if (b == 0xED) hi = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      len = 4;
      if (b == 0xF0) lo = 0x90;  // overlong below U+10000
      if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;  // a continuation byte without a lead, C0, C1, F5..FF
    }
    if (i + len > n) return i;
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    if (b1 < lo || b1 > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      const auto bk = static_cast<unsigned char>(s[i + k]);
      if (bk < 0x80 || bk > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace fabricsim
