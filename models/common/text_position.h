#pragma once
// Where a byte of an input file is, for error messages (file:line:column).
#include <cstddef>
#include <string_view>
#include <utility>

namespace fabricsim {

/// Line and column (both 1-based; columns count bytes) of byte `offset` of
/// `text`; an offset past the end gives the position just after the last
/// byte. O(offset), never throws.
inline std::pair<std::size_t, std::size_t> line_col(std::string_view text, std::size_t offset) noexcept {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

}  // namespace fabricsim
