#include "platform/stats/tail_percentile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim::stats {

TailPercentile::TailPercentile(double p, std::uint64_t max_count)
    : p_(p), max_count_(max_count), floor_(-std::numeric_limits<double>::infinity()) {
  if (!(p > 0.0 && p <= 100.0))
    throw std::invalid_argument("TailPercentile: p must be in (0,100], got " + std::to_string(p));
  if (max_count == 0) throw std::invalid_argument("TailPercentile: max_count must be >= 1");
  // Rank from the top that n values ask for: r(n) = n - nearest_rank_index(n, p)
  // = floor(n (100 - p) / 100) + 1, non-decreasing in n; the rounding of p n / 100
  // moves the computed index by at most one either way, hence the slack of 2.
  const std::uint64_t r_max = max_count - nearest_rank_index(static_cast<std::size_t>(max_count), p);
  keep_ = static_cast<std::size_t>(std::min<std::uint64_t>(max_count, r_max + 2));
  // A cut costs O(limit) and makes room for limit - keep values: 4 x keep
  // makes it ~1.3 selections' work per value even if every value is kept
  // (an increasing stream).
  limit_ = keep_ > (std::numeric_limits<std::size_t>::max() - 256) / 4 ? std::numeric_limits<std::size_t>::max()
                                                                      : 4 * keep_ + 256;
  // The whole buffer at once (no regrowth copies), up to 8 MiB.
  buf_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>({limit_, max_count, std::uint64_t{1} << 20})));
}

void TailPercentile::cut() {
  // Keep the largest keep_ values; the smallest of them becomes the floor.
  const auto first_kept = buf_.begin() + static_cast<std::ptrdiff_t>(buf_.size() - keep_);
  std::nth_element(buf_.begin(), first_kept, buf_.end());
  floor_ = *first_kept;
  buf_.erase(buf_.begin(), first_kept);
  cut_ = true;
}

double TailPercentile::value() const {
  if (n_ == 0) throw std::invalid_argument("percentile_nearest_rank: empty input");
  if (nan_) throw std::invalid_argument("percentile_nearest_rank: input contains NaN");
  if (n_ > max_count_)
    throw std::logic_error("TailPercentile: " + std::to_string(n_) + " values added, more than the bound of " +
                           std::to_string(max_count_));
  const std::size_t n = static_cast<std::size_t>(n_);
  const std::size_t r = n - nearest_rank_index(n, p_);  // rank from the top, 1-based
  if (r > buf_.size()) throw std::logic_error("TailPercentile: kept tail shorter than the rank asked for");
  std::vector<double> v(buf_);
  const auto it = v.begin() + static_cast<std::ptrdiff_t>(v.size() - r);
  std::nth_element(v.begin(), it, v.end());
  return *it;
}

}  // namespace fabricsim::stats
