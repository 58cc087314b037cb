// IO-die quadrant component alone (models/pcie/core/io_quadrant): its place
// in the stall calendar and the read stalls of completions it sends across
// quadrants (mechanism A). No engine, no SystemC.
#include <gtest/gtest.h>

#include <sstream>

#include "models/common/stats_source.h"
#include "models/pcie/core/io_quadrant.h"

using namespace fabricsim;
using namespace fabricsim::pcie;

namespace {

// Period 1 ms, windows of 100 us, quadrants 0 -> 1 -> 2 -> 3 200 us apart.
StallCalendarParams calendar() {
  StallCalendarParams c;
  c.period_ps = 1'000'000'000;
  c.window_ps = 100'000'000;
  c.stagger_ps = 200'000'000;
  c.order = {0, 1, 2, 3};
  return c;
}

ReadStallParams fixed_stall() {
  ReadStallParams r;
  r.base_ps = 50'000'000;  // 50 us
  r.per_byte_ps = 10.0;    // + 10 ps per byte
  r.jitter = 0;
  return r;
}

}  // namespace

TEST(IoQuadrant, DegradedFollowsItsTurnInTheStallCalendar) {
  const StallCalendar cal(calendar());
  IoQuadrant q1("quadrant1", IoQuadrantParams{1, fixed_stall()}, cal, 1);
  EXPECT_FALSE(q1.degraded(0));
  EXPECT_TRUE(q1.degraded(200'000'000));
  EXPECT_TRUE(q1.degraded(299'999'999));
  EXPECT_FALSE(q1.degraded(300'000'000));
  EXPECT_TRUE(q1.degraded(1'250'000'000));  // next period
}

TEST(IoQuadrant, StallsOnlyCrossQuadrantCompletionsInsideItsWindow) {
  const StallCalendar cal(calendar());
  IoQuadrant q0("quadrant0", IoQuadrantParams{0, fixed_stall()}, cal, 1);
  // In window [0, 100 us): from quadrant 0 to a requester in quadrant 2: 50 us + 10 ps x 1000 B.
  EXPECT_EQ(q0.completion_stall(2, 10'000'000, 1000, 0), 50'000'000u + 10'000u);
  EXPECT_EQ(q0.completion_stall(0, 10'000'000, 1000, 1), 0u);            // requester in the same quadrant
  EXPECT_EQ(q0.completion_stall(2, 500'000'000, 1000, 2), 0u);           // outside the window
  EXPECT_EQ(q0.completion_stall(-1, 20'000'000, 1000, 3), 50'010'000u);  // host memory reads from the GPU too
  EXPECT_EQ(q0.stats().reads, 4u);
  EXPECT_EQ(q0.stats().stalled_reads, 2u);
  EXPECT_EQ(q0.stats().read_stall_ps, 2 * 50'010'000u);
  EXPECT_EQ(common::find_stat(q0, "stalled_reads"), 2u);
  EXPECT_EQ(common::find_stat(q0, "read_stall_ps"), 2 * 50'010'000u);
}

TEST(IoQuadrant, AStallNeverOutlastsTheWindowByMoreThanTheCap) {
  const StallCalendar cal(calendar());
  auto r = fixed_stall();
  r.base_ps = 500'000'000;           // 500 us, far past the window
  r.max_past_window_ps = 5'000'000;  // 5 us
  IoQuadrant q0("quadrant0", IoQuadrantParams{0, r}, cal, 1);
  EXPECT_EQ(q0.completion_stall(1, 90'000'000, 64, 0), 100'000'000u + 5'000'000u - 90'000'000u);
}

TEST(IoQuadrant, StallFractionAndDrawsAreKeyedByTheReadNumber) {
  const StallCalendar cal(calendar());
  auto r = fixed_stall();
  r.stall_fraction = 0.5;
  r.jitter = 0.2;
  IoQuadrant a("quadrant0", IoQuadrantParams{0, r}, cal, 9);
  IoQuadrant b("quadrant0", IoQuadrantParams{0, r}, cal, 9);
  int stalled = 0;
  for (std::uint64_t k = 0; k < 400; ++k) {
    const ps_t s = a.completion_stall(1, 1'000'000, 4096, k);
    if (s) {
      ++stalled;
      EXPECT_GE(s, static_cast<ps_t>(0.8 * 50'040'960));
      EXPECT_LE(s, static_cast<ps_t>(1.2 * 50'040'960) + 1);
    }
  }
  EXPECT_GT(stalled, 150);
  EXPECT_LT(stalled, 250);
  // Same seed and read number: the same draw, whichever order they come in.
  EXPECT_EQ(b.completion_stall(1, 1'000'000, 4096, 399), a.completion_stall(1, 1'000'000, 4096, 399));
}

TEST(IoQuadrant, DumpSaysWhetherItIsDegraded) {
  const StallCalendar cal(calendar());
  IoQuadrant q0("quadrant0", IoQuadrantParams{0, fixed_stall()}, cal, 1);
  std::ostringstream in, out;
  q0.dump_state(in, 50'000'000);
  q0.dump_state(out, 150'000'000);
  EXPECT_NE(in.str().find("inside a degraded window"), std::string::npos);
  EXPECT_NE(out.str().find("clean"), std::string::npos);
}
