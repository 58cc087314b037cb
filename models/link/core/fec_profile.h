#pragma once
// FEC profile menu, threshold model (link-layer.md §3).
#include <cstdint>
#include <string>
#include <vector>

namespace fabricsim::link {

/// One FEC profile of the threshold model: a flit protected by it occupies
/// flit_bytes x (1 + overhead) on the wire, pays `decode_delay_ps` after its
/// last bit arrives, and decodes iff its raw symbol-error magnitude is
/// <= `correctable` symbols. LOW (0 %, 0 ns, 0), LIGHT (2.5 %, 5 ns, 4),
/// STRONG (6.25 %, 12 ns, 15; KP4-like RS(544,514)) in the paper's menu.
struct FecProfile {
  std::string name;
  double overhead = 0.0;              ///< parity fraction o_k (0.0625 = 6.25 %)
  std::uint64_t decode_delay_ps = 0;  ///< ps after the last bit arrives
  std::uint32_t correctable = 0;      ///< c_k, symbols corrected
};

/// Ordered menu, weakest first; policies name profiles by index. Index
/// size()-1 is "the strongest" (fixed-strong, the PREFACE flight cap).
using FecMenu = std::vector<FecProfile>;

/// The paper's three-profile menu (link-layer.md §3 table).
FecMenu default_fec_menu();

}  // namespace fabricsim::link
