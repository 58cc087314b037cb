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

/// Time -> picoseconds. Units: ps, ns, us, ms, s. "20ns" -> 20000. Rejects
/// negatives, missing units and values that are not a whole number of ps.
std::uint64_t parse_time_ps(const std::string& text);

/// Rate -> bits per second. Units: b/s, kb/s, Mb/s, Gb/s, Tb/s (decimal bits)
/// and B/s, KB/s, MB/s, GB/s, TB/s (decimal bytes, x8). "400Gb/s" -> 4e11. Must be > 0.
double parse_rate_bps(const std::string& text);

/// Size -> bytes. Units: B, KB, MB, GB (10^3 steps), KiB, MiB, GiB (2^10 steps).
/// "640B" -> 640, "8MiB" -> 8388608. Must be a whole number of bytes.
std::uint64_t parse_bytes(const std::string& text);

/// Fraction: "2.5%" -> 0.025 or a plain number "0.025". Must lie in [0, 1].
double parse_fraction(const std::string& text);

/// Plain number (no unit) -> double; throws on trailing text.
double parse_number(const std::string& text);

}  // namespace fabricsim::config
