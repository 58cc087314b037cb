// A RIFL link as a fabric link direction pair (models/rifl/core/rifl_fabric_link.h):
// offered flits delivered in order at exact times on a clean link, go-back-N
// after a scripted frame error, recoveries of errors on idle lanes, credit
// back-pressure at the boundary. No SystemC.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "models/link/core/fec_profile.h"
#include "models/rifl/core/rifl_fabric_link.h"

using namespace fabricsim::rifl;
using fabricsim::link::kNever;
using fabricsim::link::ps_t;

namespace {

// 4 lanes x 100 Gb/s (a 400 Gb/s fabric link), 256-bit frames: 2560 ps a slot;
// 80 ns transceivers + 20 ns propagation one way.
RiflConfig fabric_link(bool skip = true) {
  RiflConfig c;
  c.lanes = 4;
  c.lane_rate_bps = 100e9;
  c.transceiver_ns = 80;
  c.cable_m = 1;
  c.cable_ns_per_m = 20;
  c.skip_ahead = skip;
  return c;
}

struct Delivery {
  int dir;
  ps_t t;
  bool operator==(const Delivery& o) const { return dir == o.dir && t == o.t; }
};

// Drive the link alone: every event in time order, nothing else bounds it.
std::vector<Delivery> drain(FabricRiflLink& l) {
  std::vector<Delivery> got;
  l.set_delivery_hook([&](int d, ps_t t) { got.push_back({d, t}); });
  for (int guard = 0; l.next_event_time() != kNever && guard < 1000000; ++guard) l.step(kNever);
  return got;
}

constexpr std::uint32_t kFlit = 640;

}  // namespace

TEST(RiflFabricLink, CleanLinkDeliversInOrderWithExactLatency) {
  const RiflConfig c = fabric_link();
  FabricRiflLink l(c, kFlit, 0);
  const auto d = l.link().derived();
  const std::uint64_t slot_ps = 2560;  // 256 bits at 100 Gb/s
  ASSERT_EQ(l.slot_start_ps(1), slot_ps);
  const std::uint64_t H = static_cast<std::uint64_t>(std::ceil((80.0 + 20.0) / 2.56));  // 40 slots one way
  ASSERT_EQ(d.delay_slots, H);
  const std::uint64_t segs = (kFlit + d.payload_bytes - 1) / d.payload_bytes;  // 30 B a frame: 22 frames
  ASSERT_EQ(segs, 22u);
  l.offer(0, 0);
  l.offer(0, 0);
  l.offer(1, 1'000'000);  // the link is idle by then
  const auto got = drain(l);
  ASSERT_EQ(got.size(), 3u);
  // Flit 1: segments 0..21 round-robin over 4 lanes, the last one (lane 1)
  // serialized in slot ceil(22/4) - 1 = 5, decoded D slots later, out at the end of that slot.
  EXPECT_EQ(got[0], (Delivery{0, (segs / 4 + 1 + H) * slot_ps}));  // slot 46
  // Flit 2: segments 22..43, the last one (lane 3) in slot 43 / 4 = 10.
  EXPECT_EQ(got[1], (Delivery{0, ((2 * segs - 1) / 4 + 1 + H) * slot_ps}));  // slot 51
  // B->A: admitted at the first slot starting at or after 1 us (slot 391), on lanes 0..3 from segment 0.
  const std::uint64_t s0 = (1'000'000 + slot_ps - 1) / slot_ps;
  EXPECT_EQ(got[2], (Delivery{1, (s0 + (segs + 3) / 4 + H) * slot_ps}));
  EXPECT_EQ(l.counters(0).delivered, 2u);
  EXPECT_EQ(l.counters(1).delivered, 1u);
  EXPECT_EQ(l.counters(0).late_offers + l.counters(1).late_offers, 0u);
  EXPECT_EQ(l.link().stats(0).retransmitted_frames, 0u);
  // Stepping every slot (no skip-ahead) gives the same deliveries.
  FabricRiflLink ref(fabric_link(false), kFlit, 0);
  ref.offer(0, 0);
  ref.offer(0, 0);
  ref.offer(1, 1'000'000);
  EXPECT_EQ(drain(ref), got);
  EXPECT_GT(l.link().skipped_lane_slots(), 0u);
  EXPECT_EQ(ref.link().skipped_lane_slots(), 0u);
}

// A light FEC below RIFL (LIGHT: 2.5 % parity, 5 ns decode) is charged on the
// wire as in the link experiment: a slot carries a frame and its share of the
// codeword's parity (256 + 128 / 20 = 262.4 bits at 100 Gb/s: 2624 ps), and
// the one-way delay grows by the codeword's time and the decoder's.
TEST(RiflFabricLink, LightFecLengthensTheSlotAndTheOneWayDelay) {
  RiflConfig c = fabric_link();
  c.fec_on = true;
  c.fec = fabricsim::link::default_fec_menu()[1];
  ASSERT_EQ(c.fec.name, "LIGHT");
  FabricRiflLink l(c, kFlit, 0);
  const std::uint64_t slot_ps = 2624;  // (5120 + 128) / 20 bits at 100 Gb/s
  ASSERT_EQ(l.slot_start_ps(1), slot_ps);
  ASSERT_EQ(l.slot_start_ps(20), 20 * slot_ps);
  const double one_way_ns = 80.0 + 20.0 + 5248 / 100.0 + 5.0;  // transceivers, cable, codeword, decode
  const std::uint64_t H = static_cast<std::uint64_t>(std::ceil(one_way_ns / 2.624));
  ASSERT_EQ(l.link().derived().delay_slots, H);
  l.offer(0, 0);
  const auto got = drain(l);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (Delivery{0, (22 / 4 + 1 + H) * slot_ps}));
}

TEST(RiflFabricLink, ScriptedFrameErrorIsReplayedGoBackNAndDeliveredLater) {
  FabricRiflLink clean(fabric_link(), kFlit, 0);
  for (int i = 0; i < 8; ++i) clean.offer(0, 0);
  const auto ok = drain(clean);
  FabricRiflLink l(fabric_link(), kFlit, 0);
  // One flipped bit in the frame lane 0 sends A->B in slot 3 (a segment of flit 1).
  l.link().set_script({[](std::uint32_t lane, int dir, std::uint64_t slot, FrameKind k) {
                         return lane == 0 && dir == 0 && slot == 3 && k == FrameKind::data_valid
                                    ? std::vector<std::uint16_t>{77}
                                    : std::vector<std::uint16_t>{};
                       },
                       {3}});
  for (int i = 0; i < 8; ++i) l.offer(0, 0);
  const auto got = drain(l);
  ASSERT_EQ(got.size(), 8u);
  for (std::size_t i = 1; i < got.size(); ++i) EXPECT_GT(got[i].t, got[i - 1].t);  // in order
  const auto& s = l.link().stats(0);
  EXPECT_EQ(s.detected_errors, 1u);
  EXPECT_EQ(s.recoveries, 1u);
  EXPECT_EQ(s.undetected_errors, 0u);
  // Every flit is later than on the clean link; at least a round trip of recovery.
  const ps_t rtt = 2 * l.link().derived().delay_slots * 2560;
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_GE(got[i].t, ok[i].t + rtt) << i;
  // The link is advanced only while it has work (or is caught up by the next
  // offer): one flit much later completes the replay, the whole buffer.
  l.offer(0, 10'000'000);
  ASSERT_EQ(drain(l).size(), 1u);
  EXPECT_EQ(s.retransmitted_frames, l.link().derived().buffer);  // go-back-N over the whole buffer
  EXPECT_EQ(s.recoveries, 1u);
}

TEST(RiflFabricLink, ErrorOnAnIdleLaneTriggersARecoveryThatDelaysTheNextFlit) {
  FabricRiflLink l(fabric_link(), kFlit, 0);
  // Nothing offered yet: lane 2 B->A carries idle data frames; one is hit in slot 100.
  l.link().set_script({[](std::uint32_t lane, int dir, std::uint64_t slot, FrameKind) {
                         return lane == 2 && dir == 1 && slot == 100 ? std::vector<std::uint16_t>{5, 200}
                                                                     : std::vector<std::uint16_t>{};
                       },
                       {100}});
  const ps_t t = 150 * 2560;  // during the recovery
  l.offer(1, t);
  const auto got = drain(l);
  ASSERT_EQ(got.size(), 1u);
  const auto& d = l.link().derived();
  EXPECT_EQ(l.link().stats(1).recoveries, 1u);
  EXPECT_EQ(l.link().stats(1).detected_errors, 1u);
  EXPECT_EQ(l.link().stats(1).delivered_segments, 22u);
  // Clean: 6 slots of frames + D. The recovery of lane 2 holds its segments back.
  EXPECT_GT(got[0].t, t + (6 + d.delay_slots) * 2560);
}

TEST(RiflFabricLink, CreditsHoldFlitsAtTheBoundary) {
  FabricRiflLink l(fabric_link(), kFlit, 1);
  std::vector<ps_t> admitted;
  l.set_admit_hook([&](int, ps_t t) { admitted.push_back(t); });
  l.offer(0, 0);
  l.offer(0, 0);
  std::vector<Delivery> got;
  l.set_delivery_hook([&](int d, ps_t t) {
    got.push_back({d, t});
    if (got.size() == 1) l.return_credit(0, t + 5000);  // the far node frees the slot; back 5 ns later
  });
  while (l.next_event_time() != kNever) l.step(kNever);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(admitted.size(), 2u);
  EXPECT_EQ(admitted[0], 0u);
  EXPECT_EQ(admitted[1], got[0].t + 5000);
  EXPECT_EQ(l.counters(0).admission_stall_credit_ps, got[0].t + 5000);
  // The second flit starts at the first slot at or after its admission.
  const std::uint64_t s = l.slot_at_or_after(admitted[1]);
  EXPECT_EQ(got[1].t, l.slot_start_ps(s + 22 / 4 + 1 + l.link().derived().delay_slots) - 0);
}

TEST(RiflFabricLink, SkipAheadMatchesTheSteppedLinkUnderErrorsAndGaps) {
  // Bursts of flits both ways with idle gaps between them, at a BER that
  // hits data and idle frames alike: the skipped link (clean runs, idle
  // lanes, recovery windows in closed form) and the stepped one deliver
  // every flit at the same picosecond, with the same counters.
  auto run = [](bool skip) {
    RiflConfig c = fabric_link(skip);
    c.ber_ab = c.ber_ba = 3e-6;
    c.seed = 7;
    FabricRiflLink l(c, kFlit, 8);
    std::vector<Delivery> got;
    l.set_delivery_hook([&](int d, ps_t t) {
      got.push_back({d, t});
      l.return_credit(d, t + l.signal_delay_ps());
    });
    for (int burst = 0; burst < 6; ++burst)
      for (int i = 0; i < 20; ++i) l.offer(burst & 1, static_cast<ps_t>(burst) * 3'000'000 + i * 1000);
    while (l.next_event_time() != kNever) l.step(kNever);
    std::vector<std::uint64_t> n;
    for (int d = 0; d < 2; ++d) {
      const auto& s = l.link().stats(d);
      n.insert(n.end(), {s.frames, s.retransmitted_frames, s.recoveries, s.hit_frames, s.detected_errors,
                         s.ctrl_retrans, s.idle_data, s.fc_pauses});
    }
    return std::make_pair(got, n);
  };
  const auto fast = run(true), slow = run(false);
  ASSERT_EQ(fast.first.size(), 120u);
  EXPECT_EQ(fast.first, slow.first);
  EXPECT_EQ(fast.second, slow.second);
  EXPECT_GT(fast.second[1] + fast.second[9], 0u);  // retransmitted frames
}
