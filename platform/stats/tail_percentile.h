// Exact nearest-rank percentile of a stream in memory proportional to its
// tail: the link experiment's P99 latencies over millions of flits without a
// per-flit record.
//
// Plain C++17 (no SystemC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "platform/stats/summary.h"

namespace fabricsim::stats {

/// Streaming form of percentile_nearest_rank (summary.h) for a stream whose
/// length has a known bound: value() returns exactly
/// percentile_nearest_rank(every value add()ed, p), the same double, while
/// keeping only the values that can still be the answer.
///
/// Method (exact selection, no approximation): the answer is the r-th
/// largest value, r = n - (ceil(p n / 100) - 1) <= (100 - p) / 100 x bound + 1.
/// The buffer holds the largest values seen; once it has 4 x keep of them it
/// is cut (std::nth_element) to the largest `keep`, and from then on a value
/// not above the smallest kept one is dropped at once: it can never be
/// among the largest `keep` (an equal value changes no kept value). So
/// add() is O(1) amortised (one comparison for most values) and memory is
/// 32 x keep bytes, keep ~ (100 - p) % of the bound (10,003 values for P99
/// of 1,000,000), instead of 8 bytes per value.
///
/// Equal values are interchangeable, so of two values that compare equal
/// but differ in sign (-0.0 and +0.0) either may be returned, as with
/// std::nth_element in percentile_nearest_rank.
class TailPercentile {
 public:
  /// p: percentile in (0, 100]; max_count: the most values add() will be
  /// given (>= 1). Throws std::invalid_argument if either is out of range.
  TailPercentile(double p, std::uint64_t max_count);

  /// Add one observation (any order; NaN is remembered and makes value() throw).
  void add(double x) {
    ++n_;
    if (!(x > floor_)) {
      if (x != x) {
        nan_ = true;
        return;
      }
      if (cut_) return;  // at or below the smallest kept value: never the answer
    }
    buf_.push_back(x);
    if (buf_.size() >= limit_) cut();
  }

  /// Observations added so far.
  std::uint64_t count() const { return n_; }
  /// Values currently held (for tests and memory accounting).
  std::size_t held() const { return buf_.size(); }

  /// percentile_nearest_rank(all values added, p). Throws
  /// std::invalid_argument if nothing was added or a NaN was (as
  /// percentile_nearest_rank), std::logic_error if more than max_count
  /// values were added (the kept tail may then be too short).
  double value() const;

 private:
  void cut();
  double p_;
  std::uint64_t max_count_;
  std::size_t keep_;   // values kept by a cut: >= the largest rank from the top any n <= max_count asks for
  std::size_t limit_;  // buffer size that triggers a cut
  std::uint64_t n_ = 0;
  double floor_;       // smallest kept value after the first cut (-inf before it)
  bool cut_ = false;   // a cut has happened (values <= floor_ are dropped)
  bool nan_ = false;
  std::vector<double> buf_;
};

}  // namespace fabricsim::stats
