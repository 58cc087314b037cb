// Mechanism A (host-bridge.md §2): the stall-window calendar and the read
// stall distribution. Values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <stdexcept>

#include "models/pcie/core/stall_calendar.h"

using namespace fabricsim::pcie;

namespace {
constexpr ps_t ms = 1'000'000'000ull;  // ps per millisecond
}

// Defaults: period 2300 ms, window 175 ms, quadrants 0,1,2,3 starting at
// 0, 300, 600, 900 ms of every period.
TEST(StallCalendar, WindowsFollowThePhaseOrder) {
  const StallCalendar c(StallCalendarParams{});
  EXPECT_TRUE(c.in_window(0, 0));
  EXPECT_TRUE(c.in_window(0, 175 * ms - 1));
  EXPECT_FALSE(c.in_window(0, 175 * ms));  // end exclusive
  EXPECT_FALSE(c.in_window(1, 300 * ms - 1));
  EXPECT_TRUE(c.in_window(1, 300 * ms));
  EXPECT_TRUE(c.in_window(3, 1000 * ms));  // 900 + 100
  EXPECT_FALSE(c.in_window(3, 1075 * ms));
  EXPECT_TRUE(c.in_window(0, 2300 * ms));             // next period
  EXPECT_TRUE(c.in_window(2, 2300 * ms + 774 * ms));  // 600 + 174 ms into period 2
  EXPECT_FALSE(c.in_window(7, 0));                    // not in the order: never degraded
}

TEST(StallCalendar, WindowEndAndNextStart) {
  const StallCalendar c(StallCalendarParams{});
  EXPECT_EQ(c.window_end(1, 350 * ms), 475 * ms);  // 300 + 175
  EXPECT_EQ(c.next_window_start(2, 0), 600 * ms);
  EXPECT_EQ(c.next_window_start(2, 600 * ms), 600 * ms);
  EXPECT_EQ(c.next_window_start(2, 700 * ms), 2900 * ms);  // 600 + 2300
}

// Four staggered windows of 175 ms in 2300 ms, not overlapping (stagger 300 >
// 175): 4 x 175 / 2300 = 0.3043 -- the report's "about 30 % of the time".
TEST(StallCalendar, DegradedFractionOfAGroup) {
  const StallCalendar c(StallCalendarParams{});
  EXPECT_NEAR(c.degraded_fraction({0, 1, 2, 3}), 700.0 / 2300.0, 1e-12);
  EXPECT_NEAR(c.degraded_fraction({0}), 175.0 / 2300.0, 1e-12);
  StallCalendarParams p;
  p.stagger_ps = 100 * ms;  // windows of 0 and 1 overlap: union [0, 275)
  EXPECT_NEAR(StallCalendar(p).degraded_fraction({0, 1}), 275.0 / 2300.0, 1e-12);
  p.enabled = false;
  EXPECT_EQ(StallCalendar(p).degraded_fraction({0, 1, 2, 3}), 0.0);
  EXPECT_FALSE(StallCalendar(p).in_window(0, 0));
}

TEST(StallCalendar, ImpossibleParametersThrow) {
  StallCalendarParams p;
  p.window_ps = 3000 * ms;  // window longer than its period
  EXPECT_THROW(StallCalendar{p}, std::invalid_argument);
  p = {};
  p.order = {0, 1, 1};
  EXPECT_THROW(StallCalendar{p}, std::invalid_argument);
  p = {};
  p.stagger_ps = 750 * ms;  // 3 x 750 + 175 = 2425 > 2300
  EXPECT_THROW(StallCalendar{p}, std::invalid_argument);
  p.stagger_ps = 700 * ms;  // 3 x 700 + 175 = 2275 fits
  EXPECT_NO_THROW(StallCalendar{p});
}

// 80 KiB: 1.01 ms + 4120 ps x 81920 B = 1,347,510,400 ps (1.35 ms; the report:
// 1.1-1.6 ms). 400 KiB: 1.01 ms + 4120 x 409600 = 2,697,552,000 ps (2.7 ms).
TEST(ReadStall, SizeDependenceWithoutJitter) {
  const StallCalendar c(StallCalendarParams{});
  ReadStallParams p;
  p.jitter = 0.0;
  EXPECT_EQ(read_stall(c, p, 1, 0, 10 * ms, 81920, 1, 7), 1'347'510'400ull);
  EXPECT_EQ(read_stall(c, p, 1, 0, 10 * ms, 409600, 1, 7), 2'697'552'000ull);
  // Same quadrant, or the target's quadrant outside its window: no stall.
  EXPECT_EQ(read_stall(c, p, 0, 0, 10 * ms, 81920, 1, 7), 0u);
  EXPECT_EQ(read_stall(c, p, 1, 0, 200 * ms, 81920, 1, 7), 0u);
  // Near the window's end the stall is capped at window end + 2 ms:
  // issued at 174.9 ms -> at most 175 + 2 - 174.9 = 2.1 ms.
  EXPECT_EQ(read_stall(c, p, 1, 0, 174 * ms + 900'000'000ull, 409600, 1, 7), 2'100'000'000ull);
  // Per request (granule 80 KiB): 400 KiB = 5 pieces x 1,347,510,400 ps.
  p.granule_bytes = 81920;
  EXPECT_EQ(read_stall(c, p, 1, 0, 10 * ms, 409600, 1, 7), 5 * 1'347'510'400ull);
  p.enabled = false;
  EXPECT_EQ(read_stall(c, p, 1, 0, 10 * ms, 409600, 1, 7), 0u);
}

TEST(ReadStall, FractionJitterAndDeterminism) {
  const StallCalendar c(StallCalendarParams{});
  ReadStallParams p;
  p.stall_fraction = 0.5;
  int stalled = 0;
  for (std::uint64_t k = 0; k < 10000; ++k) {
    const ps_t s = read_stall(c, p, 2, 0, 10 * ms, 81920, 3, k);
    EXPECT_EQ(s, read_stall(c, p, 2, 0, 10 * ms, 81920, 3, k));  // same key, same answer
    if (s) {
      ++stalled;
      // jitter 0.18 around 1,347,510,400 ps
      EXPECT_GE(s, static_cast<ps_t>(1'347'510'400 * 0.82) - 1);
      EXPECT_LE(s, static_cast<ps_t>(1'347'510'400 * 1.18) + 1);
    }
  }
  // Binomial(10000, 0.5): sd 50; 4 sd either way.
  EXPECT_NEAR(stalled, 5000, 200);
}
