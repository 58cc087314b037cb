#pragma once
// Unit-bearing values in configuration files: "20ns", "400Gb/s", "640B",
// "8MiB", "2.5%". Every parser throws UnitError (std::invalid_argument) whose
// message says what was expected; the YAML layer adds file, line and key.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fabricsim::config {

struct UnitError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Value limits of every time, rate and size a file gives (docs/user-guide.md,
/// "Value limits"). With them every derived duration (a 1 MiB flit at 1 Mb/s,
/// a 4 GiB reduction at 1 Mb/s: 3.4e16 ps) stays far below 2^62 ps, so the
/// models' integer-picosecond conversions cannot overflow; keys whose derived
/// times could still leave the range check them where they are read.
constexpr double kMaxTimePs = 1e17;               ///< 100000 s
constexpr double kMinRateBps = 1e6;               ///< 1 Mb/s
constexpr double kMaxRateBps = 1e15;              ///< 1 Pb/s
constexpr double kMaxBytes = 1125899906842624.0;  ///< 1 PiB (2^50 B)

/// Time -> picoseconds. Units: ps, ns, us, ms, s. "20ns" -> 20000. Rejects
/// negatives, missing units, values that are not a whole number of ps and
/// values above kMaxTimePs.
std::uint64_t parse_time_ps(const std::string& text);

/// Rate -> bits per second. Units: b/s, kb/s, Mb/s, Gb/s, Tb/s (decimal bits)
/// and B/s, KB/s, MB/s, GB/s, TB/s (decimal bytes, x8). "400Gb/s" -> 4e11.
/// Must lie in [kMinRateBps, kMaxRateBps].
double parse_rate_bps(const std::string& text);

/// Size -> bytes. Units: B, KB, MB, GB (10^3 steps), KiB, MiB, GiB (2^10 steps).
/// "640B" -> 640, "8MiB" -> 8388608. Must be a whole number of bytes, at most kMaxBytes.
std::uint64_t parse_bytes(const std::string& text);

/// Fraction: "2.5%" -> 0.025 or a plain number "0.025". Must lie in [0, 1].
double parse_fraction(const std::string& text);

/// Plain number (no unit) -> double; throws on trailing text.
double parse_number(const std::string& text);

/// Whole number -> unsigned 64 bits: decimal digits, optionally after '+';
/// "-0" is 0. Throws UnitError for anything else (a sign other than "-0", a
/// fraction, a unit, a value beyond 2^64 - 1). Range checks are the caller's.
std::uint64_t parse_whole_number(const std::string& text);

}  // namespace fabricsim::config
