#pragma once
// Mechanism A of host-bridge.md §2: periodic read-stall windows of IO-die
// quadrants (NBIOs). Plain C++, no SystemC; the IoQuadrant component
// (io_quadrant.h) consults it for cross-quadrant peer reads.
#include <cstdint>
#include <string>
#include <vector>

#include "models/link/core/types.h"

namespace fabricsim::pcie {

using link::ps_t;

/// When each quadrant is degraded. Quadrant order[i]'s windows start at
/// offset_ps + i x stagger_ps + n x period_ps (n = 0, 1, ...) and last
/// window_ps; the phase is fixed in time, independent of the workload.
/// host-bridge.md §2: period ~2.30 s, windows ~150-200 ms, quadrants 00 -> 40
/// -> 80 -> c0 about 300 ms apart.
struct StallCalendarParams {
  ps_t period_ps = 2'300'000'000'000ull;
  ps_t window_ps = 175'000'000'000ull;
  ps_t stagger_ps = 300'000'000'000ull;
  ps_t offset_ps = 0;
  std::vector<int> order{0, 1, 2, 3};  ///< quadrant ids in turn order
  bool enabled = true;                 ///< false: no quadrant is ever degraded
};

/// Periodic stall-window calendar.
/// Errors: std::invalid_argument when window_ps > period_ps, period_ps == 0,
/// a quadrant listed twice, or the staggered windows of the order do not fit
/// into one period ((order.size() - 1) x stagger + window > period).
class StallCalendar {
 public:
  explicit StallCalendar(const StallCalendarParams& p);

  /// True iff quadrant q is inside a window at time t (start inclusive, end
  /// exclusive). A quadrant not in `order` is never degraded.
  bool in_window(int q, ps_t t) const;
  /// End of the window containing t (precondition: in_window(q, t)).
  ps_t window_end(int q, ps_t t) const;
  /// Start of the first window of q at or after t (kNever if q never stalls).
  ps_t next_window_start(int q, ps_t t) const;
  /// Fraction of time at least one of `quadrants` is degraded (exact, over one
  /// period): the report's "a group spanning all four has a degraded target
  /// about 30 % of the time".
  double degraded_fraction(const std::vector<int>& quadrants) const;
  const StallCalendarParams& params() const { return p_; }

 private:
  /// Phase of q's windows within a period, or -1 if q is not in the order.
  long long phase(int q) const;
  StallCalendarParams p_;
};

/// How an in-window cross-quadrant read is slowed (host-bridge.md §2: 10-50x;
/// an 80 KiB read 1.1-1.6 ms, up to 2.7 ms at 400 KiB). The report's two
/// figures cannot both describe every read, so the stall is a distribution:
/// with probability `stall_fraction` a read (or each `granule_bytes` piece of
/// it, when granule_bytes > 0: per request instead of per transfer) is
/// delayed by base_ps + per_byte_ps x bytes, times a uniform factor in
/// [1 - jitter, 1 + jitter], and at most until the window ends plus
/// `max_past_window_ps`.
struct ReadStallParams {
  double stall_fraction = 1.0;
  ps_t base_ps = 1'010'000'000;  ///< 1.01 ms
  double per_byte_ps = 4120.0;   ///< 4.12 ns per byte
  double jitter = 0.18;
  std::uint64_t granule_bytes = 0;
  ps_t max_past_window_ps = 2'000'000'000;  ///< a stall never outlasts the window by more than 2 ms
  bool enabled = true;
};

/// Extra delay of a peer read of `bytes` issued at `t` from quadrant `from_q`
/// to a target in quadrant `to_q`: 0 unless the quadrants differ and the
/// target's quadrant is inside a window. Deterministic in (seed, key).
ps_t read_stall(const StallCalendar& cal, const ReadStallParams& p, int from_q, int to_q, ps_t t, std::uint64_t bytes,
                std::uint64_t seed, std::uint64_t key);

}  // namespace fabricsim::pcie
