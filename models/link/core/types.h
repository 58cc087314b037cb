#pragma once
// Basic types of the link-layer protocol logic (plain C++, no SystemC).
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim::link {

/// Simulation time in picoseconds. All protocol logic runs on integer ps so
/// that results are exact and byte-identical across runs (12.8 ns x 1.0625 =
/// 13 600 ps exactly).
using ps_t = std::uint64_t;

constexpr ps_t kNever = std::numeric_limits<ps_t>::max();
constexpr ps_t kPsPerNs = 1000;

/// Largest duration a model converts to integer ps: 2^62 ps (about 53 days),
/// far above the config layer's limit on any time (docs/user-guide.md, "Value
/// limits") and low enough that sums of a few never wrap around.
constexpr double kMaxConvertedPs = 4.611686018427387904e18;

/// Checked conversion of a duration in ps (double) to integer ps, rounded to
/// the nearest ps (`ps + 0.5` truncated, the same bits as the unchecked cast).
/// Throws std::range_error for NaN, a negative value or more than
/// kMaxConvertedPs: a silent overflow would give a wrong but plausible time.
inline ps_t checked_ps(double ps, const char* what = "time") {
  if (!(ps >= 0.0) || ps > kMaxConvertedPs)
    throw std::range_error(std::string(what) + " of " + std::to_string(ps) +
                           " ps cannot be represented in integer picoseconds (limit 2^62 ps)");
  return static_cast<ps_t>(ps + 0.5);
}

/// Wire time of `bytes` at `rate_bps` (bits/s), rounded to the nearest ps.
/// Throws std::range_error (checked_ps) when it is not representable, e.g. a
/// rate of 0; the config layer keeps rates and sizes inside its limits.
inline ps_t wire_time_ps(double bytes, double rate_bps) {
  return checked_ps(bytes * 8.0 / rate_bps * 1e12, "wire time");
}

}  // namespace fabricsim::link
