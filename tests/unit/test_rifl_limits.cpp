// Unit tests (no SystemC) of the RIFL link's configuration limits: derive()
// rejects a one-way delay or a retransmit buffer beyond what the model
// allocates, naming the key behind it, instead of wrapping 32-bit counts.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/rifl/core/rifl_link.h"

namespace {

namespace rifl = fabricsim::rifl;

// derive()'s message, "" if it accepts c.
std::string derive_error(const rifl::RiflConfig& c) {
  try {
    rifl::derive(c);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

rifl::RiflConfig four_lanes() {
  rifl::RiflConfig c;
  c.lanes = 4;
  c.lane_rate_bps = 28e9;
  c.frame_bits = 256;
  c.transceiver_ns = 80;
  c.cable_m = 10;
  c.lane_skew_ns.assign(4, 0.0);
  return c;
}

}  // namespace

TEST(RiflLimits, OneWayDelayBeyond2To19SlotsNamesItsLargestPart) {
  rifl::RiflConfig c = four_lanes();
  EXPECT_EQ(derive_error(c), "");
  // 50 ms of skew on one lane: 5.5 M slots of 9.143 ns.
  c.lane_skew_ns = {0, 2, 0, 50e6};
  EXPECT_EQ(derive_error(c).rfind("lane_skew: a one-way delay of 5468762 frame slots", 0), 0u) << derive_error(c);
  // A transceiver latency of 1 s on 64 lanes (its buffer would have wrapped to 4 frames).
  c = four_lanes();
  c.lanes = 64;
  c.lane_skew_ns.clear();
  c.transceiver_ns = 1e9;
  EXPECT_EQ(derive_error(c).rfind("transceiver_latency: a one-way delay of", 0), 0u) << derive_error(c);
  // Just inside: 2^19 slots of delay at most.
  c = four_lanes();
  c.lane_skew_ns.clear();
  c.cable_m = 0;
  const double slot_ns = 256 / 28e9 * 1e9;
  c.transceiver_ns = (1u << 19) * slot_ns * 0.999;
  EXPECT_EQ(derive_error(c).find("one-way delay"), std::string::npos) << derive_error(c);
  c.transceiver_ns = (1u << 19) * slot_ns * 1.001;
  EXPECT_NE(derive_error(c).find("one-way delay"), std::string::npos);
}

TEST(RiflLimits, DerivedRetransmitBufferBeyond2To20FramesNamesTheDelay) {
  // 1000 km of cable at 5 ns/m: 5 ms one way, B = 2^22 frames at 4 x 28 Gb/s.
  rifl::RiflConfig c = four_lanes();
  c.cable_m = 1e6;
  EXPECT_EQ(derive_error(c).rfind("cable_length_m: the round trip needs a retransmit buffer of 4194304 frames", 0), 0u)
      << derive_error(c);
  EXPECT_EQ(rifl::retransmit_buffer_rtl(1e9, 1e15, 128), 1u << 31);  // clamped, never wrapped
}
