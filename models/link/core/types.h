#pragma once
// Basic types of the link-layer protocol logic (plain C++, no SystemC).
#include <cstdint>
#include <limits>

namespace fabricsim::link {

/// Simulation time in picoseconds. All protocol logic runs on integer ps so
/// that results are exact and byte-identical across runs (12.8 ns x 1.0625 =
/// 13 600 ps exactly).
using ps_t = std::uint64_t;

constexpr ps_t kNever = std::numeric_limits<ps_t>::max();
constexpr ps_t kPsPerNs = 1000;

/// Wire time of `bytes` at `rate_bps` (bits/s), rounded to the nearest ps.
/// Errors: none (rate must be > 0; checked by the config layer).
inline ps_t wire_time_ps(double bytes, double rate_bps) {
  return static_cast<ps_t>(bytes * 8.0 / rate_bps * 1e12 + 0.5);
}

}  // namespace fabricsim::link
