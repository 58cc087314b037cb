#include "platform/config/units.h"

#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

namespace fabricsim::config {

namespace {
// Split "12.5Gb/s" into 12.5 and "Gb/s". Throws if no leading number.
std::pair<double, std::string> split(const std::string& text, const char* what) {
  const char* s = text.c_str();
  while (*s == ' ') ++s;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s) throw UnitError("expected a " + std::string(what) + ", got '" + text + "'");
  for (const char* c = s; c < end; ++c)  // decimal only: no hex, inf or nan
    if (!((*c >= '0' && *c <= '9') || *c == '.' || *c == '+' || *c == '-' || *c == 'e' || *c == 'E'))
      throw UnitError("expected a decimal " + std::string(what) + ", got '" + text + "'");
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();
  if (!std::isfinite(v)) throw UnitError(std::string(what) + " must be finite, got '" + text + "'");
  // Below the smallest normal double, strtod gives a denormal or 0: say so rather than run with it.
  bool zero_digits = v == 0;  // "1e-400" underflows to 0 but is not written as zero
  for (const char* c = s; zero_digits && c < end && *c != 'e' && *c != 'E'; ++c)
    if (*c >= '1' && *c <= '9') zero_digits = false;
  if (std::fpclassify(v) == FP_SUBNORMAL || (v == 0 && !zero_digits))
    throw UnitError(std::string(what) + " '" + text +
                    "' is too close to 0 to be represented (below the smallest normal double, 2.2e-308)");
  return {v + 0.0, unit};  // + 0.0: a written "-0" is 0
}

double lookup(const std::string& text, const std::string& unit, double v,
              const std::vector<std::pair<const char*, double>>& table, const char* what, const char* example) {
  for (const auto& [u, f] : table)
    if (unit == u) return v * f;
  throw UnitError((unit.empty() ? "missing unit in " + std::string(what) + " '" + text + "'"
                                : "unknown " + std::string(what) + " unit '" + unit + "' in '" + text + "'") +
                  " (e.g. " + example + ")");
}
}  // namespace

std::uint64_t parse_time_ps(const std::string& text) {
  auto [v, unit] = split(text, "time");
  const double ps =
      lookup(text, unit, v, {{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12}}, "time", "20ns, 1.5us, 3s");
  if (ps < 0) throw UnitError("time must not be negative, got '" + text + "'");
  if (ps > kMaxTimePs) throw UnitError("time '" + text + "' exceeds the limit of 100000 s (1e17 ps)");
  const double r = std::round(ps);
  if (std::fabs(ps - r) > 1e-3) throw UnitError("time '" + text + "' is not a whole number of ps");
  return static_cast<std::uint64_t>(r);
}

double parse_rate_bps(const std::string& text) {
  auto [v, unit] = split(text, "rate");
  const double bps = lookup(text, unit, v,
                            {{"b/s", 1},
                             {"kb/s", 1e3},
                             {"Mb/s", 1e6},
                             {"Gb/s", 1e9},
                             {"Tb/s", 1e12},
                             {"Pb/s", 1e15},
                             {"B/s", 8},
                             {"KB/s", 8e3},
                             {"MB/s", 8e6},
                             {"GB/s", 8e9},
                             {"TB/s", 8e12}},
                            "rate", "400Gb/s, 63GB/s");
  if (!(bps > 0)) throw UnitError("rate must be > 0, got '" + text + "'");
  if (bps < kMinRateBps || bps > kMaxRateBps)
    throw UnitError("rate '" + text + "' outside the limits [1 Mb/s, 1 Pb/s] (1e6 to 1e15 b/s)");
  return bps;
}

std::uint64_t parse_bytes(const std::string& text) {
  auto [v, unit] = split(text, "size");
  const double b = lookup(
      text, unit, v,
      {{"B", 1},
       {"KB", 1e3},
       {"MB", 1e6},
       {"GB", 1e9},
       {"TB", 1e12},
       {"PB", 1e15},
       {"KiB", 1024.0},
       {"MiB", 1048576.0},
       {"GiB", 1073741824.0},
       {"TiB", 1099511627776.0},
       {"PiB", 1125899906842624.0}},
      "size", "640B, 8MiB");
  if (b < 0) throw UnitError("size must not be negative, got '" + text + "'");
  if (b > kMaxBytes) throw UnitError("size '" + text + "' exceeds the limit of 1 PiB (2^50 B)");
  const double r = std::round(b);
  if (std::fabs(b - r) > 1e-6) throw UnitError("size '" + text + "' is not a whole number of bytes");
  return static_cast<std::uint64_t>(r);
}

double parse_fraction(const std::string& text) {
  auto [v, unit] = split(text, "fraction");
  double f;
  if (unit == "%") {
    f = v / 100.0;
  } else if (unit.empty()) {
    f = v;
  } else {
    throw UnitError("unknown fraction unit '" + unit + "' in '" + text + "' (e.g. 2.5% or 0.025)");
  }
  if (f < 0.0 || f > 1.0) throw UnitError("fraction must lie in [0, 1], got '" + text + "'");
  return f;
}

double parse_number(const std::string& text) {
  auto [v, unit] = split(text, "number");
  if (!unit.empty()) throw UnitError("expected a plain number, got '" + text + "'");
  return v;
}

std::uint64_t parse_whole_number(const std::string& text) {
  const bool neg_zero = text.size() > 1 && text[0] == '-' && text.find_first_not_of('0', 1) == std::string::npos;
  const std::string digits = neg_zero ? std::string("0") : text.size() > 1 && text[0] == '+' ? text.substr(1) : text;
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    throw UnitError("'" + text + "' is not a whole number");
  try {
    return std::stoull(digits, nullptr, 10);
  } catch (const std::out_of_range&) {
    throw UnitError("'" + text + "' is beyond 2^64 - 1");
  }
}

}  // namespace fabricsim::config
