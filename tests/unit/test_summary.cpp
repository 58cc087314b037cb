// Unit tests for platform/stats/summary.{h,cpp}.
// Expected values are computed by hand in the comments; tolerances are 1e-6
// absolute unless stated otherwise.

#include "platform/stats/summary.h"

#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using fabricsim::stats::mean_ci;
using fabricsim::stats::paired_delta;
using fabricsim::stats::percentile_nearest_rank;
using fabricsim::stats::Sample;
using fabricsim::stats::summarize;

constexpr double kTol = 1e-6;

std::vector<double> iota_vec(int from, int to) {  // inclusive range
  std::vector<double> v;
  for (int i = from; i <= to; ++i) v.push_back(i);
  return v;
}

// ---------------------------------------------------------------- mean_ci ---

TEST(MeanCi, FourValues95) {
  // x = {1,2,3,4}: mean = 10/4 = 2.5
  // squared deviations 2.25+0.25+0.25+2.25 = 5, var = 5/3, sd = 1.2909944
  // t(0.975, df=3) = 3.1824463
  // half = 3.1824463 * 1.2909944 / sqrt(4) = 2.0542603
  const auto r = mean_ci({1, 2, 3, 4});
  EXPECT_EQ(r.n, 4u);
  EXPECT_NEAR(r.mean, 2.5, kTol);
  EXPECT_NEAR(r.sd, 1.2909944, kTol);
  EXPECT_NEAR(r.half_width, 2.0542603, kTol);
  EXPECT_NEAR(r.lo, 2.5 - 2.0542603, kTol);  // 0.4457397
  EXPECT_NEAR(r.hi, 2.5 + 2.0542603, kTol);  // 4.5542603
}

TEST(MeanCi, FourValues90) {
  // Same data, level 0.90: t(0.95, df=3) = 2.3533634
  // half = 2.3533634 * 1.2909944 / 2 = 1.5190896
  const auto r = mean_ci({4, 3, 2, 1}, 0.90);
  EXPECT_NEAR(r.mean, 2.5, kTol);
  EXPECT_NEAR(r.half_width, 1.5190896, kTol);
}

TEST(MeanCi, ThreeValuesDf2) {
  // x = {10,12,14}: mean 12, var = (4+0+4)/2 = 4, sd = 2
  // t(0.975, df=2) = 4.3026527; half = 4.3026527 * 2 / sqrt(3) = 4.9682754
  const auto r = mean_ci({10, 12, 14});
  EXPECT_NEAR(r.mean, 12.0, kTol);
  EXPECT_NEAR(r.sd, 2.0, kTol);
  EXPECT_NEAR(r.half_width, 4.9682754, kTol);
}

TEST(MeanCi, SingleValueHasZeroWidth) {
  // n == 1: sd = 0, half = 0, lo = hi = mean = 7
  const auto r = mean_ci({7.0});
  EXPECT_EQ(r.n, 1u);
  EXPECT_DOUBLE_EQ(r.mean, 7.0);
  EXPECT_DOUBLE_EQ(r.sd, 0.0);
  EXPECT_DOUBLE_EQ(r.half_width, 0.0);
  EXPECT_DOUBLE_EQ(r.lo, 7.0);
  EXPECT_DOUBLE_EQ(r.hi, 7.0);
}

TEST(MeanCi, ConstantSampleHasZeroWidth) {
  // {3,3,3}: sd = 0 -> half = 0
  const auto r = mean_ci({3, 3, 3});
  EXPECT_DOUBLE_EQ(r.sd, 0.0);
  EXPECT_DOUBLE_EQ(r.half_width, 0.0);
}

TEST(MeanCi, EmptyThrows) { EXPECT_THROW(mean_ci({}), std::invalid_argument); }

TEST(MeanCi, BadLevelThrows) {
  EXPECT_THROW(mean_ci({1, 2}, 0.0), std::invalid_argument);
  EXPECT_THROW(mean_ci({1, 2}, 1.0), std::invalid_argument);
  EXPECT_THROW(mean_ci({1, 2}, 95.0), std::invalid_argument);
  EXPECT_THROW(mean_ci({1, 2}, std::nan("")), std::invalid_argument);
}

// ----------------------------------------------------------- paired_delta ---

TEST(PairedDelta, KnownVectors) {
  // a = {10,12,14,16}, b = {9,10,11,12} -> d = {1,2,3,4}
  // mean_delta = 2.5, sd = 1.2909944 (as above)
  // z(0.975) = 1.9599640; half = 1.9599640 * 1.2909944 / 2 = 1.2651513
  // lo = 1.2348487, hi = 3.7651513
  // mean(b) = 42/4 = 10.5
  // rel = 100*2.5/10.5 = 23.8095238 %
  // rel_lo = 100*1.2348487/10.5 = 11.7604637 %, rel_hi = 100*3.7651513/10.5 = 35.8585839 %
  const auto r = paired_delta({10, 12, 14, 16}, {9, 10, 11, 12});
  EXPECT_EQ(r.n, 4u);
  EXPECT_NEAR(r.mean_delta, 2.5, kTol);
  EXPECT_NEAR(r.sd, 1.2909944, kTol);
  EXPECT_NEAR(r.half_width, 1.2651513, kTol);
  EXPECT_NEAR(r.lo, 1.2348487, kTol);
  EXPECT_NEAR(r.hi, 3.7651513, kTol);
  EXPECT_NEAR(r.rel_pct, 23.8095238, kTol);
  EXPECT_NEAR(r.rel_lo_pct, 11.7604637, kTol);
  EXPECT_NEAR(r.rel_hi_pct, 35.8585839, kTol);
  // Student t beside it: t(0.975, 3) = 3.1824463, half = 3.1824463 x
  // 1.2909944 / 2 = 2.0542603 -> [0.4457397, 4.5542603] (wider than z's)
  EXPECT_NEAR(r.t_lo, 0.4457397, kTol);
  EXPECT_NEAR(r.t_hi, 4.5542603, kTol);
}

TEST(PairedDelta, NegativeDeltaAndLevel90) {
  // a = {9,10,11}, b = {10,12,14} -> d = {-1,-2,-3}: mean -2, sd 1
  // z(0.95) = 1.6448536; half = 1.6448536 / sqrt(3) = 0.9496567
  // mean(b) = 12; rel = -200/12 = -16.6666667 %
  const auto r = paired_delta({9, 10, 11}, {10, 12, 14}, 0.90);
  EXPECT_NEAR(r.mean_delta, -2.0, kTol);
  EXPECT_NEAR(r.sd, 1.0, kTol);
  EXPECT_NEAR(r.half_width, 0.9496567, kTol);
  EXPECT_NEAR(r.lo, -2.9496567, kTol);
  EXPECT_NEAR(r.hi, -1.0503433, kTol);
  EXPECT_NEAR(r.rel_pct, -16.6666667, kTol);
}

TEST(PairedDelta, SinglePairHasZeroWidth) {
  // a = {5}, b = {4}: d = {1}, sd 0, half 0; rel = 100*1/4 = 25 %
  const auto r = paired_delta({5}, {4});
  EXPECT_DOUBLE_EQ(r.mean_delta, 1.0);
  EXPECT_DOUBLE_EQ(r.sd, 0.0);
  EXPECT_DOUBLE_EQ(r.half_width, 0.0);
  EXPECT_DOUBLE_EQ(r.rel_pct, 25.0);
  EXPECT_DOUBLE_EQ(r.rel_lo_pct, 25.0);
  EXPECT_DOUBLE_EQ(r.rel_hi_pct, 25.0);
}

TEST(PairedDelta, ZeroBaselineGivesNaNRelative) {
  // b = {-1, 1}: mean(b) = 0 -> relative figures are NaN; d = {1,1}
  const auto r = paired_delta({0, 2}, {-1, 1});
  EXPECT_DOUBLE_EQ(r.mean_delta, 1.0);
  EXPECT_TRUE(std::isnan(r.rel_pct));
  EXPECT_TRUE(std::isnan(r.rel_lo_pct));
  EXPECT_TRUE(std::isnan(r.rel_hi_pct));
}

TEST(PairedDelta, SizeMismatchThrows) { EXPECT_THROW(paired_delta({1, 2, 3}, {1, 2}), std::invalid_argument); }

TEST(PairedDelta, EmptyThrows) { EXPECT_THROW(paired_delta({}, {}), std::invalid_argument); }

TEST(PairedDelta, BadLevelThrows) { EXPECT_THROW(paired_delta({1, 2}, {1, 2}, 1.5), std::invalid_argument); }

// ------------------------------------------------------------- percentile ---

TEST(Percentile, OneToHundredAt99) {
  // n = 100: rank = ceil(99/100*100) = 99 -> sorted[98] = 99
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(iota_vec(1, 100), 99), 99.0);
}

TEST(Percentile, SingleValue) {
  // n = 1: rank = ceil(p/100) = 1 for any p in (0,100] -> 5
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({5}, 99), 5.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({5}, 1), 5.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({5}, 100), 5.0);
}

TEST(Percentile, OneToTenAt99) {
  // n = 10: rank = ceil(9.9) = 10 -> sorted[9] = 10
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(iota_vec(1, 10), 99), 10.0);
}

TEST(Percentile, MoreRanks) {
  const auto ten = iota_vec(1, 10);
  // 1..10 at 50: rank = ceil(5.0) = 5 -> 5 (exact boundary, no round-up)
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(ten, 50), 5.0);
  // 1..10 at 50.1: rank = ceil(5.01) = 6 -> 6
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(ten, 50.1), 6.0);
  // 1..10 at 100: rank = 10 -> max = 10
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(ten, 100), 10.0);
  // 1..10 at 0.001: rank = ceil(0.0001) = 1 -> min = 1
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(ten, 0.001), 1.0);
  // 1..100 at 90: rank = 90 -> 90
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(iota_vec(1, 100), 90), 90.0);
}

TEST(Percentile, UnsortedInput) {
  // sorted {1,2,3,7,9}; n=5, p=60: rank = ceil(3.0) = 3 -> 3; p=61: rank 4 -> 7
  const std::vector<double> v{9, 1, 7, 3, 2};
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 60), 3.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(v, 61), 7.0);
}

TEST(Percentile, ErrorsThrow) {
  EXPECT_THROW(percentile_nearest_rank({}, 50), std::invalid_argument);
  EXPECT_THROW(percentile_nearest_rank({1, 2}, 0), std::invalid_argument);
  EXPECT_THROW(percentile_nearest_rank({1, 2}, -1), std::invalid_argument);
  EXPECT_THROW(percentile_nearest_rank({1, 2}, 100.5), std::invalid_argument);
  EXPECT_THROW(percentile_nearest_rank({1, 2}, std::nan("")), std::invalid_argument);
  EXPECT_THROW(percentile_nearest_rank({1, std::nan("")}, 50), std::invalid_argument);
}

// -------------------------------------------------------------- summarize ---

// Group "opt" vs "base", seeds 1..3, one metric "lat_ns" and one "bw":
//   base lat = {10,12,14} (seeds 1,2,3), opt lat = {9,10,11}
//   base bw  = {1,1,1},                  opt bw  = {2,2,2}
std::vector<Sample> two_group_samples() {
  return {
      {"base", 1, {{"lat_ns", 10}, {"bw", 1}}},
      {"base", 2, {{"lat_ns", 12}, {"bw", 1}}},
      {"base", 3, {{"lat_ns", 14}, {"bw", 1}}},
      {"opt", 1, {{"lat_ns", 9}, {"bw", 2}}},
      {"opt", 2, {{"lat_ns", 10}, {"bw", 2}, {"ignored", 99}}},
      {"opt", 3, {{"lat_ns", 11}, {"bw", 2}}},
  };
}

const std::vector<std::string> kMetrics{"lat_ns", "bw"};
// Deliberately not alphabetical, to check that group_order is honoured.
const std::vector<std::string> kGroups{"opt", "base"};

TEST(Summarize, ShapeAndKeyOrder) {
  const auto j = summarize(two_group_samples(), kMetrics, kGroups);

  std::vector<std::string> top;
  for (auto it = j.begin(); it != j.end(); ++it) top.push_back(it.key());
  EXPECT_EQ(top, (std::vector<std::string>{"groups", "paired_deltas"}));

  std::vector<std::string> groups;
  for (auto it = j["groups"].begin(); it != j["groups"].end(); ++it) groups.push_back(it.key());
  EXPECT_EQ(groups, kGroups);

  const auto& g = j["groups"]["base"];
  std::vector<std::string> gkeys;
  for (auto it = g.begin(); it != g.end(); ++it) gkeys.push_back(it.key());
  EXPECT_EQ(gkeys, (std::vector<std::string>{"n", "metrics"}));
  std::vector<std::string> mnames;
  for (auto it = g["metrics"].begin(); it != g["metrics"].end(); ++it) mnames.push_back(it.key());
  EXPECT_EQ(mnames, kMetrics);  // metric_names order; "ignored" is dropped
  std::vector<std::string> mkeys;
  for (auto it = g["metrics"]["lat_ns"].begin(); it != g["metrics"]["lat_ns"].end(); ++it) mkeys.push_back(it.key());
  EXPECT_EQ(mkeys, (std::vector<std::string>{"mean", "sd", "ci95_lo", "ci95_hi", "half_width"}));

  ASSERT_TRUE(j["paired_deltas"].is_array());
  ASSERT_EQ(j["paired_deltas"].size(), 2u);  // 2 groups -> 2 ordered pairs
  const auto& p = j["paired_deltas"][0];
  std::vector<std::string> pkeys;
  for (auto it = p.begin(); it != p.end(); ++it) pkeys.push_back(it.key());
  EXPECT_EQ(pkeys, (std::vector<std::string>{"a", "b", "n", "metrics"}));
  std::vector<std::string> dkeys;
  for (auto it = p["metrics"]["lat_ns"].begin(); it != p["metrics"]["lat_ns"].end(); ++it) dkeys.push_back(it.key());
  EXPECT_EQ(dkeys, (std::vector<std::string>{"mean_delta", "ci95_lo", "ci95_hi", "t_ci95_lo", "t_ci95_hi", "rel_pct",
                                             "rel_ci95_lo_pct", "rel_ci95_hi_pct"}));
}

TEST(Summarize, GroupValues) {
  const auto j = summarize(two_group_samples(), kMetrics, kGroups);
  // base lat {10,12,14}: mean 12, sd 2, t(0.975,2)=4.3026527,
  //   half = 4.3026527*2/sqrt(3) = 4.9682754 -> [7.0317246, 16.9682754]
  const auto& b = j["groups"]["base"];
  EXPECT_EQ(b["n"].get<std::size_t>(), 3u);
  const auto& bl = b["metrics"]["lat_ns"];
  EXPECT_NEAR(bl["mean"].get<double>(), 12.0, kTol);
  EXPECT_NEAR(bl["sd"].get<double>(), 2.0, kTol);
  EXPECT_NEAR(bl["half_width"].get<double>(), 4.9682754, kTol);
  EXPECT_NEAR(bl["ci95_lo"].get<double>(), 7.0317246, kTol);
  EXPECT_NEAR(bl["ci95_hi"].get<double>(), 16.9682754, kTol);
  // opt lat {9,10,11}: mean 10, sd 1, half = 4.3026527/sqrt(3) = 2.4841377
  const auto& ol = j["groups"]["opt"]["metrics"]["lat_ns"];
  EXPECT_NEAR(ol["mean"].get<double>(), 10.0, kTol);
  EXPECT_NEAR(ol["sd"].get<double>(), 1.0, kTol);
  EXPECT_NEAR(ol["half_width"].get<double>(), 2.4841377, kTol);
  // opt bw {2,2,2}: mean 2, sd 0, half 0
  const auto& ob = j["groups"]["opt"]["metrics"]["bw"];
  EXPECT_DOUBLE_EQ(ob["mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(ob["half_width"].get<double>(), 0.0);
}

TEST(Summarize, PairedDeltaValuesAndOrder) {
  const auto j = summarize(two_group_samples(), kMetrics, kGroups);
  const auto& pd = j["paired_deltas"];
  // group_order = {opt, base}: pairs are (opt,base) then (base,opt).
  EXPECT_EQ(pd[0]["a"], "opt");
  EXPECT_EQ(pd[0]["b"], "base");
  EXPECT_EQ(pd[1]["a"], "base");
  EXPECT_EQ(pd[1]["b"], "opt");
  EXPECT_EQ(pd[0]["n"].get<std::size_t>(), 3u);

  // (opt - base) lat by seed: {9-10, 10-12, 11-14} = {-1,-2,-3}: mean -2, sd 1
  //   half = 1.9599640/sqrt(3) = 1.1315857 -> [-3.1315857, -0.8684143]
  //   mean(base) = 12: rel = -16.6666667 %, [-26.0965478 %, -7.2367855 %]
  const auto& l0 = pd[0]["metrics"]["lat_ns"];
  EXPECT_NEAR(l0["mean_delta"].get<double>(), -2.0, kTol);
  EXPECT_NEAR(l0["ci95_lo"].get<double>(), -3.1315857, kTol);
  EXPECT_NEAR(l0["ci95_hi"].get<double>(), -0.8684143, kTol);
  EXPECT_NEAR(l0["rel_pct"].get<double>(), -16.6666667, kTol);
  EXPECT_NEAR(l0["rel_ci95_lo_pct"].get<double>(), -26.0965478, kTol);
  EXPECT_NEAR(l0["rel_ci95_hi_pct"].get<double>(), -7.2367855, kTol);
  // Student t of the same differences: t(0.975, 2) = 4.3026527, half =
  //   4.3026527 / sqrt(3) = 2.4841377 -> [-4.4841377, 0.4841377] (contains 0)
  EXPECT_NEAR(l0["t_ci95_lo"].get<double>(), -4.4841377, kTol);
  EXPECT_NEAR(l0["t_ci95_hi"].get<double>(), 0.4841377, kTol);

  // (base - opt) lat: {1,2,3}: mean 2, [0.8684143, 3.1315857]
  //   mean(opt) = 10: rel = 20 %, [8.6841427 %, 31.3158573 %]
  const auto& l1 = pd[1]["metrics"]["lat_ns"];
  EXPECT_NEAR(l1["mean_delta"].get<double>(), 2.0, kTol);
  EXPECT_NEAR(l1["ci95_lo"].get<double>(), 0.8684143, kTol);
  EXPECT_NEAR(l1["ci95_hi"].get<double>(), 3.1315857, kTol);
  EXPECT_NEAR(l1["rel_pct"].get<double>(), 20.0, kTol);
  EXPECT_NEAR(l1["rel_ci95_lo_pct"].get<double>(), 8.6841427, kTol);
  EXPECT_NEAR(l1["rel_ci95_hi_pct"].get<double>(), 31.3158573, kTol);

  // (opt - base) bw: {1,1,1}: mean 1, sd 0 -> CI [1,1]; rel = 100*1/1 = 100 %
  const auto& b0 = pd[0]["metrics"]["bw"];
  EXPECT_DOUBLE_EQ(b0["mean_delta"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(b0["ci95_lo"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(b0["ci95_hi"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(b0["rel_pct"].get<double>(), 100.0);
}

// One seed per group: no spread, no interval (null), not a zero-width
// interval around the mean; the means and the delta are still given.
TEST(Summarize, OneSeedHasNoInterval) {
  const std::vector<Sample> one = {{"base", 1, {{"lat_ns", 10}}}, {"opt", 1, {{"lat_ns", 9}}}};
  const auto j = summarize(one, {"lat_ns"}, kGroups);
  const auto& g = j["groups"]["base"]["metrics"]["lat_ns"];
  EXPECT_DOUBLE_EQ(g["mean"].get<double>(), 10.0);
  for (const char* k : {"sd", "ci95_lo", "ci95_hi", "half_width"}) EXPECT_TRUE(g[k].is_null()) << k;
  const auto& d = j["paired_deltas"][0]["metrics"]["lat_ns"];
  EXPECT_DOUBLE_EQ(d["mean_delta"].get<double>(), -1.0);
  EXPECT_DOUBLE_EQ(d["rel_pct"].get<double>(), -10.0);
  for (const char* k : {"ci95_lo", "ci95_hi", "t_ci95_lo", "t_ci95_hi", "rel_ci95_lo_pct", "rel_ci95_hi_pct"})
    EXPECT_TRUE(d[k].is_null()) << k;
}

TEST(Summarize, PairsBySeedNotInputOrder) {
  // Same data as two_group_samples(), shuffled: the output must be byte-identical.
  auto s = two_group_samples();
  std::vector<Sample> shuffled{s[5], s[0], s[3], s[2], s[4], s[1]};
  const auto j1 = summarize(s, kMetrics, kGroups).dump();
  const auto j2 = summarize(shuffled, kMetrics, kGroups).dump();
  EXPECT_EQ(j1, j2);
  EXPECT_EQ(j1, summarize(s, kMetrics, kGroups).dump());  // repeatable
}

TEST(Summarize, NonContiguousSeedsPairedCorrectly) {
  // A: seeds 7 -> 100, 3 -> 50; B: seeds 3 -> 40, 7 -> 95 (input order differs).
  // Sorted by seed: A = {50,100}, B = {40,95}; d = {10,5}: mean 7.5
  // mean(B) = 67.5: rel = 100*7.5/67.5 = 11.1111111 %
  std::vector<Sample> s{{"A", 7, {{"m", 100}}}, {"A", 3, {{"m", 50}}}, {"B", 3, {{"m", 40}}}, {"B", 7, {{"m", 95}}}};
  const auto j = summarize(s, {"m"}, {"A", "B"});
  const auto& d = j["paired_deltas"][0]["metrics"]["m"];
  EXPECT_NEAR(d["mean_delta"].get<double>(), 7.5, kTol);
  EXPECT_NEAR(d["rel_pct"].get<double>(), 11.1111111, kTol);
}

TEST(Summarize, ThreeGroupsPairOrder) {
  // group_order {x,y,z}: pairs (x,y),(x,z),(y,x),(y,z),(z,x),(z,y)
  std::vector<Sample> s;
  for (const char* g : {"z", "y", "x"})
    for (std::uint64_t seed : {1u, 2u}) s.push_back({g, seed, {{"m", 1.0 + seed}}});
  const auto j = summarize(s, {"m"}, {"x", "y", "z"});
  const auto& pd = j["paired_deltas"];
  ASSERT_EQ(pd.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> want{{"x", "y"}, {"x", "z"}, {"y", "x"},
                                                              {"y", "z"}, {"z", "x"}, {"z", "y"}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(pd[i]["a"], want[i].first) << i;
    EXPECT_EQ(pd[i]["b"], want[i].second) << i;
  }
}

TEST(Summarize, SingleGroupHasNoPairs) {
  std::vector<Sample> s{{"only", 1, {{"m", 4}}}};
  const auto j = summarize(s, {"m"}, {"only"});
  EXPECT_TRUE(j["paired_deltas"].is_array());
  EXPECT_TRUE(j["paired_deltas"].empty());
  // n == 1: no interval (null), the mean as given
  EXPECT_DOUBLE_EQ(j["groups"]["only"]["metrics"]["m"]["mean"].get<double>(), 4.0);
  EXPECT_TRUE(j["groups"]["only"]["metrics"]["m"]["ci95_lo"].is_null());
  EXPECT_TRUE(j["groups"]["only"]["metrics"]["m"]["half_width"].is_null());
}

TEST(Summarize, ZeroBaselineSerialisesNull) {
  // B values {-1,1}: mean(B) = 0 -> rel fields of (A,B) are null in JSON
  std::vector<Sample> s{{"A", 1, {{"m", 0}}}, {"A", 2, {{"m", 2}}}, {"B", 1, {{"m", -1}}}, {"B", 2, {{"m", 1}}}};
  const auto j = summarize(s, {"m"}, {"A", "B"});
  const auto& d = j["paired_deltas"][0]["metrics"]["m"];
  EXPECT_TRUE(d["rel_pct"].is_null());
  EXPECT_TRUE(d["rel_ci95_lo_pct"].is_null());
  EXPECT_TRUE(d["rel_ci95_hi_pct"].is_null());
  EXPECT_DOUBLE_EQ(d["mean_delta"].get<double>(), 1.0);
  EXPECT_NE(j.dump().find("\"rel_pct\":null"), std::string::npos);
}

TEST(Summarize, DumpIsExact) {
  // Byte-level check of the serialised form for a tiny case.
  // A: {1,3} (seeds 1,2): mean 2, sd sqrt(2); B: {1,1}: mean 1, sd 0
  // Check only the stable leading part (exact integers) and the key order.
  std::vector<Sample> s{{"B", 1, {{"m", 1}}}, {"B", 2, {{"m", 1}}}, {"A", 1, {{"m", 1}}}, {"A", 2, {{"m", 3}}}};
  const auto text = summarize(s, {"m"}, {"B", "A"}).dump();
  EXPECT_EQ(text.rfind("{\"groups\":{\"B\":{\"n\":2,\"metrics\":{\"m\":{\"mean\":1.0,\"sd\":0.0,"
                       "\"ci95_lo\":1.0,\"ci95_hi\":1.0,\"half_width\":0.0}}},\"A\":{\"n\":2,",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\"paired_deltas\":[{\"a\":\"B\",\"b\":\"A\",\"n\":2,\"metrics\":{\"m\":{"
                      "\"mean_delta\":-1.0,"),
            std::string::npos)
      << text;
}

// ---- summarize: error cases ----

bool throws_naming(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return std::string(e.what()).find(needle) != std::string::npos;
  }
  return false;
}

TEST(SummarizeErrors, GroupWithoutSamples) {
  auto s = two_group_samples();
  EXPECT_THROW(summarize(s, kMetrics, {"base", "opt", "ghost"}), std::invalid_argument);
  EXPECT_TRUE(throws_naming([&] { summarize(s, kMetrics, {"base", "opt", "ghost"}); }, "ghost"));
}

TEST(SummarizeErrors, SeedSetsDiffer) {
  auto s = two_group_samples();
  s.push_back({"opt", 4, {{"lat_ns", 1}, {"bw", 1}}});  // opt has seed 4, base does not
  EXPECT_THROW(summarize(s, kMetrics, kGroups), std::invalid_argument);
  EXPECT_TRUE(throws_naming([&] { summarize(s, kMetrics, kGroups); }, "'opt' and 'base'"));

  // Same size, different seeds: base {1,2,3} vs opt {1,2,5}
  auto t = two_group_samples();
  t[5].seed = 5;
  EXPECT_THROW(summarize(t, kMetrics, kGroups), std::invalid_argument);
}

TEST(SummarizeErrors, DuplicateGroupSeed) {
  auto s = two_group_samples();
  s.push_back({"base", 2, {{"lat_ns", 1}, {"bw", 1}}});
  EXPECT_THROW(summarize(s, kMetrics, kGroups), std::invalid_argument);
  EXPECT_TRUE(throws_naming([&] { summarize(s, kMetrics, kGroups); }, "seed 2"));
}

TEST(SummarizeErrors, MissingMetric) {
  auto s = two_group_samples();
  s[3].metrics.erase("bw");
  EXPECT_THROW(summarize(s, kMetrics, kGroups), std::invalid_argument);
  EXPECT_TRUE(throws_naming([&] { summarize(s, kMetrics, kGroups); }, "'bw'"));
}

TEST(SummarizeErrors, SampleGroupNotInOrder) {
  auto s = two_group_samples();
  s.push_back({"stray", 1, {{"lat_ns", 1}, {"bw", 1}}});
  EXPECT_THROW(summarize(s, kMetrics, kGroups), std::invalid_argument);
}

TEST(SummarizeErrors, DuplicateNames) {
  auto s = two_group_samples();
  EXPECT_THROW(summarize(s, kMetrics, {"opt", "base", "opt"}), std::invalid_argument);
  EXPECT_THROW(summarize(s, {"bw", "bw"}, kGroups), std::invalid_argument);
}

}  // namespace
