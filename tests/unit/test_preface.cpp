// Unit tests for models/link/core/policy.{h,cpp}: the PREFACE posterior filter,
// the coding selector, the flight cap and the baseline policies
// (link-layer.md §3-§4).
//
// Expected values are either the independently computed reference vectors of
// shared/reference/preface_posterior_vectors.csv (copied below, 52 rows) or
// computed by hand in the comments.

#include "models/link/core/policy.h"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace {

using fabricsim::link::Decision;
using fabricsim::link::default_fec_menu;
using fabricsim::link::FecMenu;
using fabricsim::link::GeParams;
using fabricsim::link::make_policy;
using fabricsim::link::Observation;
using fabricsim::link::PolicyParams;
using fabricsim::link::PostDecodeParams;
using fabricsim::link::PostDecodePolicy;
using fabricsim::link::PrefaceFilter;
using fabricsim::link::PrefacePolicy;
using fabricsim::link::residual_estimate;
using fabricsim::link::select_profile;

constexpr std::size_t kLow = 0, kLight = 1, kStrong = 2;
constexpr double kVecTol = 1e-8;

// shared/reference/preface_posterior_vectors.csv, verbatim (profile as index).
struct Row {
  int t;
  int z;
  double q_prior, q_post, q_next;
  std::size_t profile;
  unsigned window;
};
constexpr Row kRows[] = {
    {0, 0, 0.047619048, 0.019627085, 0.021978410, kStrong, 8},
    {1, 0, 0.021978410, 0.008917684, 0.012168598, kStrong, 8},
    {2, 0, 0.012168598, 0.004908123, 0.008495840, kLight, 16},
    {3, 0, 0.008495840, 0.003419155, 0.007131946, kLight, 16},
    {4, 0, 0.007131946, 0.002867898, 0.006626995, kLight, 16},
    {5, 0, 0.006626995, 0.002664037, 0.006440258, kLight, 16},
    {6, 0, 0.006440258, 0.002588678, 0.006371229, kLight, 16},
    {7, 0, 0.006371229, 0.002560826, 0.006345716, kLight, 16},
    {8, 0, 0.006345716, 0.002550532, 0.006336287, kLight, 16},
    {9, 0, 0.006336287, 0.002546728, 0.006332802, kLight, 16},
    {10, 0, 0.006332802, 0.002545322, 0.006331515, kLight, 16},
    {11, 0, 0.006331515, 0.002544802, 0.006331039, kLight, 16},
    {12, 1, 0.006331039, 0.792652674, 0.730069849, kStrong, 8},
    {13, 1, 0.730069849, 0.999384160, 0.919435890, kStrong, 8},
    {14, 0, 0.919435890, 0.820452589, 0.755534572, kStrong, 8},
    {15, 1, 0.755534572, 0.999461014, 0.919506289, kStrong, 8},
    {16, 1, 0.919506289, 0.999854121, 0.919866375, kStrong, 8},
    {17, 1, 0.919866375, 0.999854830, 0.919867025, kStrong, 8},
    {18, 0, 0.919867025, 0.821310481, 0.756320401, kStrong, 8},
    {19, 0, 0.756320401, 0.554117333, 0.511571477, kStrong, 8},
    {20, 1, 0.511571477, 0.998411260, 0.918544714, kStrong, 8},
    {21, 0, 0.918544714, 0.818682414, 0.753913091, kStrong, 8},
    {22, 0, 0.753913091, 0.550898609, 0.508623126, kStrong, 8},
    {23, 0, 0.508623126, 0.293013206, 0.272400097, kStrong, 8},
    {24, 0, 0.272400097, 0.130361118, 0.123410784, kStrong, 8},
    {25, 0, 0.123410784, 0.053362387, 0.052879946, kStrong, 8},
    {26, 0, 0.052879946, 0.021866467, 0.024029684, kStrong, 8},
    {27, 0, 0.024029684, 0.009762150, 0.012942129, kStrong, 8},
    {28, 0, 0.012942129, 0.005222561, 0.008783866, kStrong, 8},
    {29, 0, 0.008783866, 0.003535685, 0.007238688, kLight, 16},
    {30, 0, 0.007238688, 0.002911008, 0.006666483, kLight, 16},
    {31, 0, 0.006666483, 0.002679975, 0.006454857, kLight, 16},
    {32, 0, 0.006454857, 0.002594569, 0.006376625, kLight, 16},
    {33, 0, 0.006376625, 0.002563003, 0.006347711, kLight, 16},
    {34, 0, 0.006347711, 0.002551336, 0.006337024, kLight, 16},
    {35, 0, 0.006337024, 0.002547025, 0.006333075, kLight, 16},
    {36, 0, 0.006333075, 0.002545431, 0.006331615, kLight, 16},
    {37, 0, 0.006331615, 0.002544843, 0.006331076, kLight, 16},
    {38, 0, 0.006331076, 0.002544625, 0.006330876, kLight, 16},
    {39, 0, 0.006330876, 0.002544545, 0.006330803, kLight, 16},
    {40, 0, 0.006330803, 0.002544515, 0.006330776, kLight, 16},
    {41, 0, 0.006330776, 0.002544504, 0.006330766, kLight, 16},
    {42, 0, 0.006330766, 0.002544500, 0.006330762, kLight, 16},
    {43, 0, 0.006330762, 0.002544498, 0.006330760, kLight, 16},
    {44, 0, 0.006330760, 0.002544498, 0.006330760, kLight, 16},
    {45, 0, 0.006330760, 0.002544498, 0.006330760, kLight, 16},
    {46, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
    {47, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
    {48, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
    {49, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
    {50, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
    {51, 0, 0.006330760, 0.002544497, 0.006330760, kLight, 16},
};
constexpr std::size_t kNumRows = sizeof(kRows) / sizeof(kRows[0]);
static_assert(kNumRows == 52, "the reference CSV has 52 rows");

Observation obs(bool raw_error, bool decode_failed = false, std::size_t profile = 0) {
  Observation o;
  o.raw_error = raw_error;
  o.decode_failed = decode_failed;
  o.profile = profile;
  return o;
}

// Selector switch points at lambda 16, default menu and model (hand-derived):
//   r_LOW(q)    = (1-q) 0.001 max(0,1-0/1) + q 0.6 max(0,1-0/24)  = 0.001(1-q) + 0.6q
//   r_LIGHT(q)  = (1-q) 0.001 max(0,1-4/1) + q 0.6 (1-4/24)       = 0.5q
//   r_STRONG(q) = (1-q) 0.001 max(0,1-15/1) + q 0.6 (1-15/24)     = 0.225q
//   cost_LOW    = 0      + 16(0.001 + 0.599q) = 0.016 + 9.584q
//   cost_LIGHT  = 0.025  + 16(0.5q)           = 0.025 + 8q
//   cost_STRONG = 0.0625 + 16(0.225q)         = 0.0625 + 3.6q
//   LOW = LIGHT    at 1.584q = 0.009  -> q = 0.009/1.584  = 0.00568181818...
//   LIGHT = STRONG at 4.4q   = 0.0375 -> q = 0.0375/4.4   = 0.00852272727...
constexpr double kLowLight = 0.009 / 1.584;
constexpr double kLightStrong = 0.0375 / 4.4;

// ---------------------------------------------------------------------------
// Filter against the reference vectors

TEST(PrefaceFilter, StartsFromStationaryPrior) {
  // a/(a+b) = 0.004/0.084 = 0.0476190476...
  PrefaceFilter f{GeParams{}};
  EXPECT_NEAR(f.prior(), 0.004 / 0.084, 1e-15);
  EXPECT_NEAR(f.prior(), kRows[0].q_prior, kVecTol);
}

TEST(PrefaceFilter, MatchesEveryReferenceRow) {
  PrefaceFilter f{GeParams{}};
  for (const Row& r : kRows) {
    SCOPED_TRACE("t=" + std::to_string(r.t));
    EXPECT_NEAR(f.prior(), r.q_prior, kVecTol);
    const double ret = f.update(r.z != 0);
    EXPECT_NEAR(f.posterior(), r.q_post, kVecTol);
    EXPECT_NEAR(f.prior(), r.q_next, kVecTol);
    EXPECT_EQ(ret, f.prior());  // update() returns the new prior
  }
}

TEST(PrefaceFilter, FirstStepsByHand) {
  // t=0, z=0: q^- = 1/21 = 0.047619...
  //   posterior = q^-(1-e_B) / (q^-(1-e_B) + (1-q^-)(1-e_G))
  //             = (1/21)(0.4) / ((1/21)(0.4) + (20/21)(0.999)) = 0.4 / (0.4 + 19.98) = 0.4/20.38
  //   next      = post(1-b) + (1-post)a = 0.004 + 0.916 post
  PrefaceFilter f{GeParams{}};
  f.update(false);
  const double post0 = 0.4 / 20.38;  // 0.019627085...
  EXPECT_NEAR(f.posterior(), post0, 1e-12);
  EXPECT_NEAR(f.prior(), 0.004 + 0.916 * post0, 1e-12);
  // t=1, z=1 from that prior: post = q 0.6 / (q 0.6 + (1-q) 0.001)
  const double q1 = 0.004 + 0.916 * post0;
  f.update(true);
  const double post1 = q1 * 0.6 / (q1 * 0.6 + (1 - q1) * 0.001);
  EXPECT_NEAR(f.posterior(), post1, 1e-12);
  EXPECT_NEAR(f.prior(), 0.004 + 0.916 * post1, 1e-12);
}

TEST(PrefaceFilter, CleanRunFixedPoint) {
  // Fixed point of q -> 0.004 + 0.916 * 0.4q / (0.4q + 0.999(1-q)):
  //   q (0.999 - 0.599q) = 0.004 (0.999 - 0.599q) + 0.3664 q
  //   0.599 q^2 - 0.634996 q + 0.003996 = 0
  //   q = (0.634996 - sqrt(0.634996^2 - 4 * 0.599 * 0.003996)) / (2 * 0.599) = 0.0063307596...
  const double disc = 0.634996 * 0.634996 - 4 * 0.599 * 0.003996;
  const double q_star = (0.634996 - std::sqrt(disc)) / (2 * 0.599);
  EXPECT_NEAR(q_star, 0.006331, 5e-7);
  PrefaceFilter f{GeParams{}};
  for (int i = 0; i < 200; ++i) f.update(false);
  EXPECT_NEAR(f.prior(), q_star, 1e-12);
  // and the fixed point sits on LIGHT: kLowLight < q* < kLightStrong
  EXPECT_EQ(select_profile(GeParams{}, default_fec_menu(), 16.0, f.prior()), kLight);
}

// ---------------------------------------------------------------------------
// Residual estimate and selector

TEST(PrefaceSelector, ResidualEstimateByHand) {
  const GeParams m;
  const FecMenu menu = default_fec_menu();
  // q = 0.1: LOW 0.001*0.9 + 0.6*0.1 = 0.0609; LIGHT 0.5*0.1 = 0.05; STRONG 0.225*0.1 = 0.0225
  EXPECT_NEAR(residual_estimate(m, menu[kLow], 0.1), 0.0609, 1e-15);
  EXPECT_NEAR(residual_estimate(m, menu[kLight], 0.1), 0.05, 1e-15);
  EXPECT_NEAR(residual_estimate(m, menu[kStrong], 0.1), 0.0225, 1e-15);
  // q = 0: only the GOOD term: LOW 0.001, LIGHT 0 (c=4 >= m_G=1), STRONG 0
  EXPECT_NEAR(residual_estimate(m, menu[kLow], 0.0), 0.001, 1e-18);
  EXPECT_EQ(residual_estimate(m, menu[kLight], 0.0), 0.0);
  EXPECT_EQ(residual_estimate(m, menu[kStrong], 0.0), 0.0);
  // q = 1: LOW 0.6, LIGHT 0.6*20/24 = 0.5, STRONG 0.6*9/24 = 0.225
  EXPECT_NEAR(residual_estimate(m, menu[kLow], 1.0), 0.6, 1e-15);
  EXPECT_NEAR(residual_estimate(m, menu[kLight], 1.0), 0.5, 1e-15);
  EXPECT_NEAR(residual_estimate(m, menu[kStrong], 1.0), 0.225, 1e-15);
}

TEST(PrefaceSelector, SwitchPointsAtLambda16) {
  const GeParams m;
  const FecMenu menu = default_fec_menu();
  EXPECT_NEAR(kLowLight, 0.005682, 5e-7);
  EXPECT_NEAR(kLightStrong, 0.008523, 5e-7);
  // 0.00568: LOW 0.016+9.584*0.00568 = 0.07043712 < LIGHT 0.025+8*0.00568 = 0.07044
  EXPECT_EQ(select_profile(m, menu, 16.0, 0.00568), kLow);
  // 0.00569: LOW 0.07053296 > LIGHT 0.07052
  EXPECT_EQ(select_profile(m, menu, 16.0, 0.00569), kLight);
  // 0.0085: LIGHT 0.093 < STRONG 0.0625+3.6*0.0085 = 0.0931
  EXPECT_EQ(select_profile(m, menu, 16.0, 0.0085), kLight);
  // 0.00853: LIGHT 0.09324 > STRONG 0.093208
  EXPECT_EQ(select_profile(m, menu, 16.0, 0.00853), kStrong);
  // Just either side of the exact crossovers.
  EXPECT_EQ(select_profile(m, menu, 16.0, kLowLight - 1e-9), kLow);
  EXPECT_EQ(select_profile(m, menu, 16.0, kLowLight + 1e-9), kLight);
  EXPECT_EQ(select_profile(m, menu, 16.0, kLightStrong - 1e-9), kLight);
  EXPECT_EQ(select_profile(m, menu, 16.0, kLightStrong + 1e-9), kStrong);
  // Extremes: q=0 -> LOW (0.016 < 0.025 < 0.0625), q=1 -> STRONG (3.6625 < 8.025 < 9.6)
  EXPECT_EQ(select_profile(m, menu, 16.0, 0.0), kLow);
  EXPECT_EQ(select_profile(m, menu, 16.0, 1.0), kStrong);
  // lambda = 0: overhead only -> LOW at any q
  EXPECT_EQ(select_profile(m, menu, 0.0, 1.0), kLow);
}

TEST(PrefaceSelector, ExactTieGoesToTheWeakerProfile) {
  // Model e_G=0, e_B=0.5, m_B=2; profile 0: o=0, c=0; profile 1: o=0.25, c=2.
  // lambda 1 at q = 0.5: cost0 = 0 + 1*(0.5*0.5*1) = 0.25; cost1 = 0.25 + 1*(0.5*0.5*0) = 0.25
  // (every operand is a dyadic rational: an exact tie in binary floating point).
  GeParams m;
  m.e_good = 0.0;
  m.e_bad = 0.5;
  m.m_good = 1;
  m.m_bad = 2;
  FecMenu menu{{"A", 0.0, 0, 0}, {"B", 0.25, 0, 2}};
  EXPECT_EQ(select_profile(m, menu, 1.0, 0.5), 0u);
  EXPECT_EQ(select_profile(m, menu, 1.0, 0.5 + 1.0 / 1024), 1u);  // cost0 0.251953 > 0.25
  EXPECT_EQ(select_profile(m, menu, 1.0, 0.5 - 1.0 / 1024), 0u);
  // Three identical profiles: all tie, the first wins.
  FecMenu same{{"X", 0.1, 0, 1}, {"Y", 0.1, 0, 1}, {"Z", 0.1, 0, 1}};
  EXPECT_EQ(select_profile(m, same, 16.0, 0.3), 0u);
}

// ---------------------------------------------------------------------------
// Policies

TEST(PrefacePolicy, ProfileAndWindowMatchEveryReferenceRow) {
  PolicyParams p;  // lambda 16, W_H 16, W_R 8, default model
  PrefacePolicy pol(default_fec_menu(), p, /*with_flight_cap=*/true);
  // Before any observation: prior 0.0476 > 0.00852 -> STRONG, W = min(16, 8) = 8.
  EXPECT_EQ(pol.decision().profile, kStrong);
  EXPECT_EQ(pol.decision().window, 8u);
  for (const Row& r : kRows) {
    SCOPED_TRACE("t=" + std::to_string(r.t));
    pol.observe(obs(r.z != 0, false, pol.decision().profile));
    EXPECT_NEAR(pol.filter().prior(), r.q_next, kVecTol);
    EXPECT_EQ(pol.decision().profile, r.profile);
    EXPECT_EQ(pol.decision().window, r.window);
  }
}

TEST(PrefacePolicy, MakePolicyPrefaceMatchesReference) {
  auto pol = make_policy("preface", default_fec_menu(), PolicyParams{});
  for (const Row& r : kRows) {
    pol->observe(obs(r.z != 0));
    EXPECT_EQ(pol->decision().profile, r.profile) << "t=" << r.t;
    EXPECT_EQ(pol->decision().window, r.window) << "t=" << r.t;
  }
}

TEST(PrefacePolicy, PredictiveFecNeverReducesWindow) {
  auto pol = make_policy("predictive-fec", default_fec_menu(), PolicyParams{});
  EXPECT_EQ(pol->decision().profile, kStrong);
  EXPECT_EQ(pol->decision().window, 16u);
  for (const Row& r : kRows) {
    pol->observe(obs(r.z != 0));
    EXPECT_EQ(pol->decision().profile, r.profile) << "t=" << r.t;  // same selector
    EXPECT_EQ(pol->decision().window, 16u) << "t=" << r.t;         // W_H always
  }
}

TEST(PrefacePolicy, FlightCapUsesMinOfWindows) {
  // W_R larger than W_H is rejected by the config layer; the policy caps at min(W_H, W_R).
  PolicyParams p;
  p.window_high = 12;
  p.window_reduced = 5;
  PrefacePolicy pol(default_fec_menu(), p, true);
  EXPECT_EQ(pol.decision(), (Decision{kStrong, 5}));
  for (int i = 0; i < 3; ++i) pol.observe(obs(false));  // rows 0..2: LIGHT after the 3rd
  EXPECT_EQ(pol.decision(), (Decision{kLight, 12}));
}

TEST(FixedStrongPolicy, AlwaysStrongAndWindowHigh) {
  auto pol = make_policy("fixed-strong", default_fec_menu(), PolicyParams{});
  EXPECT_EQ(pol->decision(), (Decision{kStrong, 16}));
  for (int i = 0; i < 50; ++i) {
    pol->observe(obs(i % 3 == 0, i % 5 == 0, kStrong));
    EXPECT_EQ(pol->decision(), (Decision{kStrong, 16}));
  }
}

TEST(PostDecodePolicy, EwmaByHand) {
  // alpha = 1/8, raise_above 0.05, lower_below 0.01 (set explicitly: the shipped
  // defaults are calibration constants and may change), W = W_H = 16, starts LOW, EWMA 0.
  PolicyParams params;
  params.post_decode = PostDecodeParams{0.125, 0.05, 0.01};
  auto base = make_policy("post-decode", default_fec_menu(), params);
  auto* pol = dynamic_cast<PostDecodePolicy*>(base.get());
  ASSERT_NE(pol, nullptr);
  EXPECT_EQ(pol->decision(), (Decision{kLow, 16}));
  EXPECT_EQ(pol->ewma(), 0.0);

  // A raw error that decoded is not a decode failure: EWMA stays 0, level stays LOW.
  pol->observe(obs(true, false, kLow));
  EXPECT_EQ(pol->ewma(), 0.0);
  EXPECT_EQ(pol->decision().profile, kLow);

  // Failure: ewma = 7/8*0 + 1/8 = 0.125 > 0.05 -> LIGHT
  pol->observe(obs(true, true, kLow));
  EXPECT_DOUBLE_EQ(pol->ewma(), 0.125);
  EXPECT_EQ(pol->decision(), (Decision{kLight, 16}));
  // Success: ewma = 0.875*0.125 = 0.109375 > 0.05 -> STRONG (one level per observation)
  pol->observe(obs(false, false, kLight));
  EXPECT_DOUBLE_EQ(pol->ewma(), 0.109375);
  EXPECT_EQ(pol->decision(), (Decision{kStrong, 16}));
  // Success k (k = 2..18): ewma = 0.125 * 0.875^k stays >= 0.0113 > 0.01 -> stays STRONG
  // (k = 2..6: above raise_above but already at the top; k = 7..18: between the thresholds).
  double e = 0.109375;
  for (int k = 2; k <= 18; ++k) {
    pol->observe(obs(false));
    e *= 0.875;
    EXPECT_DOUBLE_EQ(pol->ewma(), e) << "k=" << k;
    EXPECT_EQ(pol->decision().profile, kStrong) << "k=" << k;
  }
  // k = 18: 0.125 * 0.875^18 = 0.0112994 (hand: 0.875^18 = 0.0903951)
  EXPECT_NEAR(pol->ewma(), 0.0112994, 1e-7);
  // k = 19: 0.125 * 0.875^19 = 0.0098870 < 0.01 -> one level down: LIGHT
  pol->observe(obs(false));
  EXPECT_NEAR(pol->ewma(), 0.0098870, 1e-7);
  EXPECT_EQ(pol->decision(), (Decision{kLight, 16}));
  // k = 20: 0.0086511 < 0.01 -> LOW
  pol->observe(obs(false));
  EXPECT_NEAR(pol->ewma(), 0.0086511, 1e-7);
  EXPECT_EQ(pol->decision(), (Decision{kLow, 16}));
  // k = 21: still below, already at the bottom -> LOW
  pol->observe(obs(false));
  EXPECT_EQ(pol->decision(), (Decision{kLow, 16}));
}

TEST(PostDecodePolicy, HysteresisHoldsMiddleLevel) {
  // alpha 0.5, raise_above 0.3, lower_below 0.1 (all steps exact in binary):
  PolicyParams p;
  p.post_decode = PostDecodeParams{0.5, 0.3, 0.1};
  PostDecodePolicy pol(default_fec_menu(), p.window_high, p.post_decode);
  struct Step {
    bool fail;
    double ewma;
    std::size_t level;
  };
  const Step steps[] = {
      {true, 0.5, kLight},          // 0.5*0 + 0.5 = 0.5 > 0.3 -> up
      {false, 0.25, kLight},        // 0.25 in [0.1, 0.3] -> hold
      {false, 0.125, kLight},       // 0.125 in [0.1, 0.3] -> hold
      {false, 0.0625, kLow},        // 0.0625 < 0.1 -> down
      {false, 0.03125, kLow},       // bottom
      {true, 0.515625, kLight},     // 0.015625 + 0.5 -> up
      {true, 0.7578125, kStrong},   // 0.2578125 + 0.5 -> up
      {true, 0.87890625, kStrong},  // top
      {false, 0.439453125, kStrong},
      {false, 0.2197265625, kStrong},    // between: hold at STRONG
      {false, 0.10986328125, kStrong},   // between: hold
      {false, 0.054931640625, kLight},   // < 0.1 -> down one
      {true, 0.5274658203125, kStrong},  // up one
  };
  int i = 0;
  for (const Step& s : steps) {
    pol.observe(obs(s.fail, s.fail));
    EXPECT_DOUBLE_EQ(pol.ewma(), s.ewma) << "step " << i;
    EXPECT_EQ(pol.decision().profile, s.level) << "step " << i;
    EXPECT_EQ(pol.decision().window, 16u);
    ++i;
  }
}

TEST(MakePolicy, UnknownNameListsValidPolicies) {
  try {
    make_policy("preface2", default_fec_menu(), PolicyParams{});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("preface2"), std::string::npos) << msg;
    for (const char* n : {"fixed-strong", "post-decode", "predictive-fec", "preface"})
      EXPECT_NE(msg.find(n), std::string::npos) << n << " missing from: " << msg;
  }
  EXPECT_THROW(make_policy("", default_fec_menu(), PolicyParams{}), std::invalid_argument);
  EXPECT_THROW(make_policy("preface", FecMenu{}, PolicyParams{}), std::invalid_argument);
}

}  // namespace
