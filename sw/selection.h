#pragma once
// Transport selection (collectives.md §5, host-bridge.md §6): ladders that map
// payload-size buckets to transports, and the start-up race that times
// candidates and keeps the best median (the runtime's choice) or the best
// mean. Plain C++, no SystemC; the harness (platform/sim/host_run) runs the
// candidates and feeds their operation times here.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fabricsim::sw {

/// A ladder: bucket i covers sizes (max[i-1], max[i]] and uses transport[i].
struct Ladder {
  std::string name;
  struct Bucket {
    std::uint64_t max_bytes = 0;
    std::string transport;
  };
  std::vector<Bucket> buckets;  ///< ascending max_bytes

  /// Transport for a payload of `bytes`. Throws std::out_of_range if bytes
  /// exceeds the last bucket.
  const std::string& pick(std::uint64_t bytes) const;
  /// Throws std::invalid_argument when buckets are empty, not strictly
  /// ascending, or name an unknown transport.
  void validate() const;
};

/// How a race ranks candidates.
enum class RaceBy { median, mean };

/// Index of the best candidate by `by` over its samples (operation times,
/// any unit); ties go to the earlier candidate. Candidates without samples
/// never win. Throws std::invalid_argument if no candidate has samples.
std::size_t race_pick(const std::vector<std::vector<double>>& samples, RaceBy by);

/// Selection policies a decode-round run can use.
enum class Selection { ladder, race_median, race_mean, fabric_class };
Selection parse_selection(const std::string& name);  ///< "ladder", "race-median", "race-mean", "fabric-class"
std::string to_string(Selection s);

/// Candidates with read modes removed (the report's "drop read modes when
/// ranks span quadrants").
std::vector<std::string> without_peer_reads(const std::vector<std::string>& candidates);

}  // namespace fabricsim::sw
