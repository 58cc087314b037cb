// Unit tests for platform/stats/tail_percentile.{h,cpp}: the streaming
// nearest-rank percentile must return exactly what percentile_nearest_rank
// returns on the whole sample, whatever the order, ties, length and bound.

#include "platform/stats/tail_percentile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "platform/stats/summary.h"

namespace {

using fabricsim::stats::nearest_rank_index;
using fabricsim::stats::percentile_nearest_rank;
using fabricsim::stats::TailPercentile;

// Streams the values through a TailPercentile with bound `max_count` and
// returns its answer (bit pattern compared by the caller).
double streamed(const std::vector<double>& v, double p, std::uint64_t max_count) {
  TailPercentile t(p, max_count);
  for (double x : v) t.add(x);
  EXPECT_EQ(t.count(), v.size());
  return t.value();
}

void expect_same(const std::vector<double>& v, double p, std::uint64_t max_count, const char* what) {
  const double want = percentile_nearest_rank(v, p);
  const double got = streamed(v, p, max_count);
  EXPECT_EQ(got, want) << what << " n=" << v.size() << " p=" << p << " bound=" << max_count;
}

TEST(TailPercentile, HandValues) {
  // 1..100 at p=99 -> 99; 1..10 at p=99 -> 10; {5} -> 5 (summary.h examples).
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(streamed(v, 99, 100), 99.0);
  EXPECT_EQ(streamed(v, 99, 1000000), 99.0);
  std::vector<double> ten(v.begin(), v.begin() + 10);
  EXPECT_EQ(streamed(ten, 99, 10), 10.0);
  EXPECT_EQ(streamed({5.0}, 99, 1), 5.0);
  EXPECT_EQ(streamed({5.0}, 100, 1), 5.0);
  EXPECT_EQ(streamed({5.0}, 0.001, 7), 5.0);
}

// Long streams (far beyond the buffer, so values are dropped and the tail is
// cut many times): increasing (every value is the new maximum, the link
// experiment's overloaded queue), decreasing, random, heavy ties, constant,
// with infinities; bound equal to n and larger than n.
TEST(TailPercentile, EqualsWholeSampleSelection) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(0.0, 1000.0);
  std::uniform_int_distribution<int> small(0, 7);
  for (const std::size_t n : {1u, 2u, 99u, 100u, 101u, 1000u, 30011u, 200000u}) {
    std::vector<std::vector<double>> cases(6);
    for (std::size_t i = 0; i < n; ++i) {
      cases[0].push_back(static_cast<double>(i) * 0.5);
      cases[1].push_back(static_cast<double>(n - i));
      cases[2].push_back(u(rng));
      cases[3].push_back(small(rng));
      cases[4].push_back(42.0);
      cases[5].push_back(i % 97 == 0 ? std::numeric_limits<double>::infinity()
                                     : (i % 89 == 0 ? -std::numeric_limits<double>::infinity() : u(rng)));
    }
    const char* names[] = {"increasing", "decreasing", "random", "ties", "constant", "infinities"};
    for (std::size_t k = 0; k < cases.size(); ++k)
      for (const double p : {99.0, 99.9, 50.0, 100.0, 0.001, 12.5})
        for (const std::uint64_t bound : {std::uint64_t{n}, std::uint64_t{n} * 3 + 5}) expect_same(cases[k], p, bound, names[k]);
  }
}

// Memory is bounded by the tail: 1 M increasing values at P99 hold at most
// 4 x (1 % of the bound + 3) + 256 values, not 1 M.
TEST(TailPercentile, HoldsOnlyTheTail) {
  TailPercentile t(99.0, 1000000);
  std::size_t most = 0;
  for (int i = 0; i < 1000000; ++i) {
    t.add(i);
    most = std::max(most, t.held());
  }
  EXPECT_LE(most, 4u * (10000u + 3u) + 256u);
  EXPECT_EQ(t.value(), 989999.0);  // sorted[ceil(0.99 x 1e6) - 1] = sorted[989999]
}

TEST(TailPercentile, NearestRankIndex) {
  EXPECT_EQ(nearest_rank_index(100, 99), 98u);
  EXPECT_EQ(nearest_rank_index(10, 99), 9u);
  EXPECT_EQ(nearest_rank_index(1, 50), 0u);
  EXPECT_EQ(nearest_rank_index(10, 100), 9u);
  EXPECT_EQ(nearest_rank_index(10, 0.001), 0u);
  EXPECT_EQ(nearest_rank_index(1137570, 99), 1126194u);  // ceil(1,126,194.3) - 1
}

TEST(TailPercentile, Errors) {
  EXPECT_THROW(TailPercentile(0, 10), std::invalid_argument);
  EXPECT_THROW(TailPercentile(100.5, 10), std::invalid_argument);
  EXPECT_THROW(TailPercentile(std::nan(""), 10), std::invalid_argument);
  EXPECT_THROW(TailPercentile(99, 0), std::invalid_argument);
  TailPercentile empty(99, 10);
  EXPECT_THROW(empty.value(), std::invalid_argument);
  TailPercentile nan(99, 10);
  nan.add(1.0);
  nan.add(std::nan(""));
  EXPECT_THROW(nan.value(), std::invalid_argument);
  TailPercentile over(99, 2);
  for (int i = 0; i < 3; ++i) over.add(i);
  EXPECT_THROW(over.value(), std::logic_error);
}

}  // namespace
