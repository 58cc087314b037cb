#pragma once
// One interface through which every component publishes its statistics, so
// the platform (reports, checks, traces) reads them by name without knowing
// the component's class. Plain C++, no SystemC.
//
// Naming rule: a statistic's name is snake_case, in the field's terms, and
// carries its unit as a suffix where it has one: `_ps` (integer picoseconds),
// `_bytes`; a bare name is a count (bursts, drains, stalled_reads). Values are
// unsigned 64-bit integers (counts and integer-picosecond sums), so that
// statistics are exact and byte-identical across runs.
//
// A component that owns sub-parts (ports, ordering points) may publish them
// under dotted names ("port.gpu3.down_bytes"); a container of components (an
// engine) publishes each component's statistics under "<component>.<name>".
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabricsim::common {

/// Receives one statistic: its name (see the naming rule above) and value.
using StatVisitor = std::function<void(std::string_view name, std::uint64_t value)>;

/// A component's statistics, read by name.
class StatsSource {
 public:
  virtual ~StatsSource() = default;
  /// Call v once per statistic, in a fixed order (the same on every run).
  virtual void visit_stats(const StatVisitor& v) const = 0;
};

/// All statistics of s, in visit order.
inline std::vector<std::pair<std::string, std::uint64_t>> collect_stats(const StatsSource& s) {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  s.visit_stats([&](std::string_view n, std::uint64_t v) { out.emplace_back(std::string(n), v); });
  return out;
}

/// The value of the statistic called `name` (nullopt if s has none).
inline std::optional<std::uint64_t> find_stat(const StatsSource& s, std::string_view name) {
  std::optional<std::uint64_t> r;
  s.visit_stats([&](std::string_view n, std::uint64_t v) {
    if (!r && n == name) r = v;
  });
  return r;
}

/// Sum of every statistic of s named "<something>.<leaf>" (e.g. leaf
/// "drains" over "hb00.drains", "hb20.drains", ...; a bare "drains" is not
/// counted, so a container's own totals are not added twice).
inline std::uint64_t sum_stats(const StatsSource& s, std::string_view leaf) {
  std::uint64_t sum = 0;
  s.visit_stats([&](std::string_view n, std::uint64_t v) {
    if (n.size() > leaf.size() && n.substr(n.size() - leaf.size()) == leaf && n[n.size() - leaf.size() - 1] == '.')
      sum += v;
  });
  return sum;
}

}  // namespace fabricsim::common
