// RIFL protocol logic (models/rifl/core): CRC-12, receiver flags, go-back-N,
// flow control, bonding, out-of-sync, skip-ahead exactness. No SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "models/link/core/counter_rng.h"
#include "models/rifl/core/analytic.h"
#include "models/rifl/core/crc12.h"
#include "models/rifl/core/error_stream.h"
#include "models/rifl/core/frame.h"
#include "models/rifl/core/rifl_link.h"

using namespace fabricsim::rifl;

namespace {
RiflConfig small(std::uint32_t lanes, std::uint64_t bytes) {
  RiflConfig c;
  c.retransmit_buffer = 64;  // the lane-rate formula: short replays keep the tests quick
  c.lanes = lanes;
  c.bytes_per_direction = bytes;
  return c;
}

// A scripted frame error: lane, direction (0 = A->B), slot.
struct Hit {
  std::uint32_t lane;
  int dir;
  std::uint64_t slot;
};
// Last delivery slot of each direction with exactly these frame errors.
std::pair<std::int64_t, std::int64_t> last_deliveries(const RiflConfig& c, const std::vector<Hit>& hits) {
  RiflLink r(c);
  std::vector<std::uint64_t> at;
  for (const auto& h : hits) at.push_back(h.slot);
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  r.set_script({[hits](std::uint32_t lane, int dir, std::uint64_t slot, FrameKind) {
                  for (const auto& h : hits)
                    if (h.lane == lane && h.dir == dir && h.slot == slot) return std::vector<std::uint16_t>{100};
                  return std::vector<std::uint16_t>{};
                },
                at});
  EXPECT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  return {static_cast<std::int64_t>(r.stats(0).last_delivery_slot),
          static_cast<std::int64_t>(r.stats(1).last_delivery_slot)};
}
// One lane, B = 256, 300-B packets, `cable` metres; prefix errors A, B, A
// 2000 slots apart from slot 5000 leave (chain) rc_A = 2B, rc_B = 3B - H - 7.
RiflConfig one_lane(double cable) {
  RiflConfig c = small(1, 3'000'000);
  c.retransmit_buffer = 256;
  c.cable_m = cable;
  c.payload_min = c.payload_max = 300;
  return c;
}
const std::vector<Hit> kPrefixABA{{0, 0, 5000}, {0, 1, 7000}, {0, 0, 9000}};
constexpr std::uint64_t kPrimary = 12000;  // the primary A->B failure after kPrefixABA
}  // namespace

TEST(RiflCrc12, HandComputedVectors) {
  // x^12 mod g = g's low part; x^13 = 0x05E; x^19 = 0x7AF (by hand: 0xBC0 << 1 = 0x1780, ^ 0x102F).
  EXPECT_EQ(crc12_of_string("1"), 0x02F);
  EXPECT_EQ(crc12_of_string("10"), 0x05E);
  EXPECT_EQ(crc12_of_string("11"), 0x071);
  EXPECT_EQ(crc12_of_string("10000000"), 0x7AF);
  EXPECT_EQ(crc12_of_string("0000"), 0x000);
  // A message followed by its CRC leaves remainder 0.
  const std::string m = "1011001110001111";
  std::string withcrc = m;
  const auto c = crc12_of_string(m.c_str());
  for (int i = 11; i >= 0; --i) withcrc += ((c >> i) & 1) ? '1' : '0';
  EXPECT_EQ(crc12_of_string(withcrc.c_str()), 0);
  // Bytewise and bitwise agree on every length (byte-aligned or not).
  std::vector<std::uint64_t> w(17);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = fabricsim::link::mix64(i + 99);
  for (std::size_t n = 0; n <= 1024; n += 7) EXPECT_EQ(crc12(w, n), crc12_bitwise(w, n)) << n;
}

TEST(RiflCrc12, WeightDistributionEvenOnlyAndMonteCarlo) {
  const UndetectedErrorModel m(128, 40);
  for (std::uint32_t w = 1; w < 40; w += 2) EXPECT_EQ(m.count(w), 0.0) << w;  // (x+1) | g
  EXPECT_GE(m.min_distance(), 4u);
  EXPECT_GT(m.count(m.min_distance()), 0.0);
  // Monte Carlo at a high BER: real frames, real flips, the CRC decides.
  const double ber = 0.05;
  const FrameCodec codec(128);
  IndependentBitErrors errs(ber, 128, 7, 0);
  std::vector<std::uint16_t> pos;
  std::uint64_t undetected = 0;
  const std::uint64_t frames = 300000;
  for (std::uint64_t t = 0; t < frames; ++t) {
    if (errs.next_hit_slot() != t) continue;
    errs.take(t, pos);
    const auto sent = codec.build(FrameKind::data_valid, t, t * 7919);
    auto rx = sent;
    for (auto p : pos) rx[p >> 6] ^= 1ULL << (63 - (p & 63));
    const RxView v = codec.parse(rx, sent);
    if (v.header == kHeaderData && v.check == (t & 0xFFF) && v.bits_changed) ++undetected;
  }
  const double expect = m.probability(ber) * frames;
  EXPECT_LT(m.truncation_bound(ber), 1e-3 * m.probability(ber));
  EXPECT_NEAR(static_cast<double>(undetected), expect, 4.0 * std::sqrt(expect) + 1) << "expected " << expect;
  EXPECT_GT(undetected, 20u);
}

// The syndrome distribution: a probability distribution (header intact:
// total (1 - ber)^4), its zero syndrome = the error-free frame plus the
// weight distribution's P_ud, a single-error syndrome ~ ber at low BER, and
// at a high BER the syndromes of real flipped frames (Monte Carlo).
TEST(RiflCrc12, SyndromeDistributionMatchesWeightsAndMonteCarlo) {
  for (std::uint32_t F : {128u, 256u}) {
    for (double ber : {1e-9, 1e-4, 0.05}) {
      const SyndromeDistribution sd(F, ber);
      double total = 0;
      for (std::uint32_t s = 0; s < 4096; ++s) total += sd.p(s);
      EXPECT_NEAR(total, std::pow(1 - ber, 4), 1e-12) << F << " " << ber;
      const UndetectedErrorModel m(F, 40);
      EXPECT_NEAR(sd.p(0), std::pow(1 - ber, F) + m.probability(ber), 1e-13) << F << " " << ber;
    }
    // the last CRC bit alone: syndrome 1, probability ber (1 - ber)^(F - 1) + O(ber^3)
    const SyndromeDistribution lo(F, 1e-9);
    EXPECT_NEAR(lo.p(1), 1e-9, 1e-15);
    std::vector<std::uint64_t> counts(4096, 0);
    counts[1] = 1000;
    counts[0] = 5;  // s = 0 is not a misordering: not summed
    EXPECT_NEAR(lo.expected(counts), 1000 * lo.p(1), 1e-18);
  }
  const double ber = 0.05;
  const std::uint32_t F = 128;
  const SyndromeDistribution sd(F, ber);
  const FrameCodec codec(F);
  IndependentBitErrors errs(ber, F, 3, 1);
  std::vector<std::uint16_t> pos;
  std::vector<std::uint64_t> seen(4096, 0);
  const std::uint64_t frames = 400000;
  std::uint64_t header_hit = 0;
  for (std::uint64_t t = 0; t < frames; ++t) {
    const auto sent = codec.build(FrameKind::data_valid, 0, t * 7919);
    if (errs.next_hit_slot() != t) {
      ++seen[0];
      continue;
    }
    errs.take(t, pos);
    auto rx = sent;
    for (auto p : pos) rx[p >> 6] ^= 1ULL << (63 - (p & 63));
    const RxView v = codec.parse(rx, sent);
    if (v.header != kHeaderData) {
      ++header_hit;
      continue;
    }
    ++seen[v.check];  // counter 0: the check is the syndrome
  }
  for (std::uint32_t s : {0u, 1u, 2u, 0x02Fu, 0x800u, 0x123u, 0xFFFu}) {
    const double expect = sd.p(s) * frames;
    EXPECT_NEAR(static_cast<double>(seen[s]), expect, 4.0 * std::sqrt(expect) + 1) << "syndrome " << s;
  }
  EXPECT_NEAR(static_cast<double>(header_hit), (1 - std::pow(1 - ber, 4)) * frames,
              4.0 * std::sqrt(frames * (1 - std::pow(1 - ber, 4))));
}

// The expected number of frames accepted out of order, from the exposure the
// link counts (mismatched frames by needed syndrome) and the syndrome
// distribution, against the acceptances the simulation itself produces at a
// BER where they are frequent (real flipped bits, the CRC decides).
TEST(RiflLink, OutOfOrderAcceptancesMatchTheirExpectation) {
  double expected = 0;
  std::uint64_t observed = 0;
  for (std::uint64_t seed : {1u, 2u}) {
    RiflConfig c;
    c.bytes_per_direction = 5'000'000;
    c.ber_ab = c.ber_ba = 2e-5;
    c.seed = seed;
    RiflLink r(c);
    r.count_mismatched_frames();
    ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
    const SyndromeDistribution sd(c.frame_bits, 2e-5);
    for (int d = 0; d < 2; ++d) {
      expected += sd.expected(r.mismatched_frames(d));
      observed += r.stats(d).undetected_misordered;
      EXPECT_EQ(r.stats(d).undetected_misordered, r.stats(d).undetected_errors);  // no CRC miss at this BER
    }
  }
  EXPECT_GT(expected, 10.0);
  EXPECT_NEAR(static_cast<double>(observed), expected, 3.0 * std::sqrt(expected)) << "expected " << expected;
}

// The hit-frame fast path (syndrome table, payload kind from the error
// pattern) gives what parse() gives on the built and flipped bits: every
// frame size and kind, sparse and dense error patterns, header flips, and
// patterns turning one reserved payload into another.
TEST(RiflFrames, HitViewEqualsBuildAndParse) {
  std::uint64_t rng = 12345;
  auto next = [&] { return rng = fabricsim::link::mix64(rng + 0x9E3779B97F4A7C15ULL); };
  const FrameKind kinds[] = {FrameKind::data_valid, FrameKind::data_idle,  FrameKind::fc_pause,    FrameKind::fc_resume,
                             FrameKind::ctrl_idle,  FrameKind::ctrl_pause, FrameKind::ctrl_retrans};
  std::uint64_t fallbacks_exercised = 0;
  for (std::uint32_t F : {128u, 256u, 512u, 1024u}) {
    FrameCodec codec(F);
    for (int trial = 0; trial < 4000; ++trial) {
      const FrameKind k = kinds[next() % 7];
      const std::uint64_t counter = next(), content = next();
      std::vector<std::uint16_t> flips;
      const int mode = trial % 5;
      if (mode <= 2) {  // 1..(mode * 3 + 1) random bits
        const int n = 1 + static_cast<int>(next() % (mode * 3 + 1));
        for (int i = 0; i < n; ++i) flips.push_back(static_cast<std::uint16_t>(next() % F));
      } else if (mode == 3) {  // header bits only, or all four
        for (std::uint16_t p = 0; p < 4; ++p)
          if ((next() & 1) || trial % 10 == 3) flips.push_back(p);
      } else {  // turn the payload into another reserved pattern / key (every chunk hit)
        const auto sent = codec.build(k, counter, content);
        const auto target = codec.build(kinds[next() % 7], counter, content);
        for (std::uint16_t p = 4; p < F - 12; ++p)
          if (((sent[p >> 6] ^ target[p >> 6]) >> (63 - (p & 63))) & 1) flips.push_back(p);
        if (next() & 1) flips.push_back(static_cast<std::uint16_t>(F - 1 - next() % 12));
        ++fallbacks_exercised;
      }
      std::sort(flips.begin(), flips.end());
      const auto sent = codec.build(k, counter, content);
      auto rx = sent;
      for (auto p : flips) rx[p >> 6] ^= 1ULL << (63 - (p & 63));
      const RxView a = codec.parse(rx, sent);
      const RxView b = codec.hit(k, counter, [&] { return content; }, flips);
      ASSERT_EQ(a.header, b.header) << F << " " << trial;
      ASSERT_EQ(a.check, b.check) << F << " " << trial;
      ASSERT_EQ(a.kind, b.kind) << F << " " << trial << " sent " << to_string(k);
      ASSERT_EQ(a.bits_changed, b.bits_changed) << F << " " << trial;
    }
  }
  EXPECT_GT(fallbacks_exercised, 1000u);
}

TEST(RiflErrors, SkipAheadBitErrorRate) {
  IndependentBitErrors e(1e-3, 256, 3, 1);
  std::vector<std::uint16_t> pos;
  std::uint64_t bits = 0, frames = 0;
  for (std::uint64_t t = 0; t < 200000; ++t)
    if (e.next_hit_slot() == t) {
      e.take(t, pos);
      bits += pos.size();
      ++frames;
      for (std::size_t i = 1; i < pos.size(); ++i) EXPECT_LT(pos[i - 1], pos[i]);
    }
  const double n = 200000.0 * 256;
  EXPECT_NEAR(bits, n * 1e-3, 4 * std::sqrt(n * 1e-3));
  const double pf = 1 - std::pow(1 - 1e-3, 256);
  EXPECT_NEAR(frames, 200000 * pf, 4 * std::sqrt(200000 * pf));
  IndependentBitErrors none(0.0, 256, 3, 1);
  EXPECT_EQ(none.next_hit_slot(), fabricsim::link::kNever);
}

TEST(RiflFlags, SevenControlFramesDoNotTriggerEightDo) {
  for (auto kind : {FrameKind::ctrl_retrans, FrameKind::ctrl_pause}) {
    RxEventFlags f;
    for (int i = 0; i < 7; ++i) f.on_frame(true, kind, false, false);
    EXPECT_FALSE(f.remote_retrans || f.remote_pause);
    f.on_frame(true, kind, false, false);
    EXPECT_TRUE(kind == FrameKind::ctrl_retrans ? f.remote_retrans : f.remote_pause);
    // A broken run restarts the count.
    RxEventFlags g;
    for (int i = 0; i < 7; ++i) g.on_frame(true, kind, false, false);
    g.on_frame(false, FrameKind::data_valid, false, false);  // a corrupted frame
    for (int i = 0; i < 7; ++i) g.on_frame(true, kind, false, false);
    EXPECT_FALSE(g.remote_retrans || g.remote_pause);
  }
  {
    // Requests interleaved with data frames (a replay) still count; 16 data frames end the run.
    RxEventFlags h;
    for (int i = 0; i < 7; ++i) {
      h.on_frame(true, FrameKind::ctrl_retrans, false, false);
      h.on_frame(false, FrameKind::data_valid, true, false);
    }
    EXPECT_FALSE(h.remote_retrans);
    h.on_frame(true, FrameKind::ctrl_retrans, false, false);
    EXPECT_TRUE(h.remote_retrans);
    RxEventFlags k;
    for (int i = 0; i < 7; ++i) k.on_frame(true, FrameKind::ctrl_retrans, false, false);
    for (int i = 0; i < 16; ++i) k.on_frame(false, FrameKind::data_valid, true, false);
    k.on_frame(true, FrameKind::ctrl_retrans, false, false);
    EXPECT_FALSE(k.remote_retrans);
    EXPECT_EQ(k.retrans_cnt, 1);
  }
  RxEventFlags f;
  for (int i = 0; i < 8; ++i) f.on_frame(true, FrameKind::ctrl_retrans, false, false);
  for (int i = 0; i < 15; ++i) f.on_frame(false, FrameKind::data_valid, true, false);
  EXPECT_TRUE(f.remote_retrans);
  f.on_frame(false, FrameKind::data_valid, true, false);
  EXPECT_FALSE(f.remote_retrans);
}

TEST(RiflDerive, RtlBufferFormulaAndBadInput) {
  // RTT = 2 (80 + 3.34 x 10) ns = 226.8 ns; 226.8 ns x 28 Gb/s / 256 = 24.8 frames; 32 + 24.8 -> 2^6.
  EXPECT_EQ(retransmit_buffer_rtl(226.8, 28e9, 256), 64u);
  EXPECT_EQ(retransmit_buffer_rtl(226.8, 112e9, 256), 256u);
  RiflConfig c;
  const auto d = derive(c);
  EXPECT_EQ(d.buffer, 256u);  // the link rate: 4 x 28 Gb/s
  EXPECT_EQ(d.fc_off, 2 * 13 + 8u);
  EXPECT_EQ(d.fc_on, 2 * (2 * 13 + 8u));
  EXPECT_EQ(d.fc_buffer, d.fc_on + 2 * 13 + 3 * 256 + 8u);
  EXPECT_EQ(d.delay_slots, 13u);  // 113.4 ns / 9.142857 ns
  EXPECT_EQ(d.payload_bytes, 30u);
  auto bad = [](auto f) {
    RiflConfig x;
    f(x);
    EXPECT_THROW(derive(x), std::invalid_argument);
  };
  bad([](RiflConfig& x) { x.frame_bits = 200; });
  bad([](RiflConfig& x) { x.lanes = 0; });
  bad([](RiflConfig& x) { x.ber_ab = 0.6; });
  bad([](RiflConfig& x) {
    x.fc_on = 100;
    x.fc_off = 100;
  });
  bad([](RiflConfig& x) {
    x.retransmit_buffer = 64;
    x.fc_buffer = 300;
    x.fc_on = 100;
    x.fc_off = 10;
  });
  bad([](RiflConfig& x) { x.retransmit_buffer = 32; });
  bad([](RiflConfig& x) {
    x.retransmit_buffer = 57;
    x.lane_skew_ns = {0, 0, 0, 1};
  });
}

TEST(RiflDerive, ZeroDelayIsOneSlotEachWay) {
  // No cable, no transceiver: the model's delay is one slot, the formula's
  // round trip two slots: 32 + 2 slots x 4 lanes = 40 frames -> 2^6 (the bare
  // formula would give 32, below the bound 32 + 2).
  RiflConfig c;
  c.cable_m = 0;
  c.transceiver_ns = 0;
  const auto d = derive(c);
  EXPECT_EQ(d.delay_slots, 1u);
  EXPECT_EQ(d.buffer, 64u);
  c.lanes = 1;
  EXPECT_EQ(derive(c).buffer, 64u);  // 32 + 2 -> 2^6
}

TEST(RiflDerive, LaneStateBytesCountsBuffersAndPipes) {
  RiflConfig c;  // 4 lanes, B = 256, D = 13
  // per lane: (2 x 256 + 2 x 13) frames of 24 bytes + 2 x (13 + 48) window flags of 2 bytes
  EXPECT_EQ(lane_state_bytes(c), 4u * ((2 * 256 + 2 * 13) * 24 + 2 * (13 + 48) * 2));
  c.retransmit_buffer = 1u << 20;
  EXPECT_EQ(lane_state_bytes(c), 4u * ((2ull * (1u << 20) + 2 * 13) * 24 + 2 * (13 + 48) * 2));
}

TEST(RiflLink, ErrorFreeDeliversEverythingAtLineRate) {
  RiflLink r(small(4, 2'000'000));
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(r.stats(d).delivered_segments, r.stats(d).segments);
    EXPECT_EQ(r.stats(d).retransmitted_frames, 0u);
  }
  EXPECT_EQ(r.latencies_slots().size(), r.stats(0).packets + r.stats(1).packets);
  // A one-frame-per-lane packet: D + 1 slots; a packet of s segments over 4 lanes: ceil(s/4) - 1 + D + 1.
  for (auto l : r.latencies_slots()) EXPECT_GE(l, r.derived().delay_slots + 1);
}

TEST(RiflLink, GoBackNReplaysExactlyTheBufferedFramesInOrder) {
  RiflConfig c = small(1, 400'000);
  RiflLink r(c);
  const std::uint64_t hit = 3000;
  r.set_script({[&](std::uint32_t, int dir, std::uint64_t slot, FrameKind) {
                  return dir == 0 && slot == hit ? std::vector<std::uint16_t>{100} : std::vector<std::uint16_t>{};
                },
                {hit}});
  std::vector<std::uint64_t> fresh, replayed;
  std::uint64_t last_fresh_before_replay = 0;
  r.set_frame_observer([&](const RiflLink::SentFrame& f) {
    if (f.dir != 0 || !is_data(f.kind)) return;
    if (f.replay) {
      if (replayed.empty()) last_fresh_before_replay = fresh.back();
      replayed.push_back(f.counter);
    } else {
      fresh.push_back(f.counter);
    }
  });
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  const std::uint32_t B = r.derived().buffer;
  ASSERT_EQ(replayed.size(), B);
  for (std::uint32_t i = 0; i < B; ++i) EXPECT_EQ(replayed[i], last_fresh_before_replay - B + 1 + i);
  EXPECT_EQ(r.stats(0).recoveries, 1u);
  EXPECT_EQ(r.stats(0).detected_errors, 1u);
  EXPECT_EQ(r.stats(0).delivered_segments, r.stats(0).segments);
}

TEST(RiflAnalytic, RecoveryCostMatchesAScriptedError) {
  // Slots to deliver the same traffic with 0, 1 and 2 isolated errors on A->B.
  auto run = [](int errors) {
    RiflConfig c = small(1, 2'000'000);
    c.payload_min = c.payload_max = 300;
    RiflLink r(c);
    std::vector<std::uint64_t> at{5000, 20000};
    at.resize(errors);
    r.set_script({[at](std::uint32_t, int dir, std::uint64_t slot, FrameKind) {
                    return dir == 0 && std::find(at.begin(), at.end(), slot) != at.end()
                               ? std::vector<std::uint16_t>{100}
                               : std::vector<std::uint16_t>{};
                  },
                  at});
    EXPECT_EQ(r.run(), RiflLink::Status::done);
    return std::make_pair(r.stats(0).last_delivery_slot, r.stats(1).last_delivery_slot);
  };
  const auto e0 = run(0), e1 = run(1), e2 = run(2);
  const auto d = derive(small(1, 1));
  const auto k = recovery_cost(d);
  // The first recovery starts its retransmit counter at 0 (B idle slots fewer).
  EXPECT_EQ(e1.first - e0.first, k.forward_slots - d.buffer);
  EXPECT_EQ(e1.second - e0.second, k.reverse_slots - d.buffer);
  // Steady state: the counter resumes where the previous recovery left it.
  EXPECT_EQ(e2.first - e1.first, k.forward_slots);
  EXPECT_EQ(e2.second - e1.second, k.reverse_slots);
  EXPECT_NEAR(frame_error_probability(1e-6, 256), 256e-6, 256e-6 * 1e-3);
}

TEST(RiflAnalytic, RetransmitCounterPhaseChain) {
  // Isolated errors (2000 slots apart) in a chosen order of directions: each
  // one's cost to both streams is the chain step's figure, exactly.
  RiflConfig c = small(1, 3'000'000);
  c.retransmit_buffer = 256;
  c.payload_min = c.payload_max = 300;
  const auto d = derive(c);
  const std::vector<int> dirs{0, 1, 0, 0, 1, 1, 0, 1, 1, 0};
  auto run = [&](std::size_t errors) {
    RiflLink r(c);
    std::vector<std::uint64_t> at;
    for (std::size_t i = 0; i < errors; ++i) at.push_back(5000 + 2000 * i);
    r.set_script({[&, at](std::uint32_t, int dir, std::uint64_t slot, FrameKind) {
                    const auto it = std::find(at.begin(), at.end(), slot);
                    return it != at.end() && dirs[it - at.begin()] == dir ? std::vector<std::uint16_t>{100}
                                                                          : std::vector<std::uint16_t>{};
                  },
                  at});
    EXPECT_EQ(r.run(), RiflLink::Status::done);
    return std::make_pair(r.stats(0).last_delivery_slot, r.stats(1).last_delivery_slot);
  };
  std::uint32_t rc[2] = {0, 0};  // the link starts with both counters at 0
  auto prev = run(0);
  std::set<double> seen;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    const int f = dirs[i], q = 1 - f;
    const double cf = forward_cost_at(d, rc[f]);
    seen.insert(cf);
    const double cost[2] = {f == 0 ? cf : cf - 2.0 * d.delay_slots - 15, f == 1 ? cf : cf - 2.0 * d.delay_slots - 15};
    const auto now = run(i + 1);
    EXPECT_EQ(static_cast<double>(now.first - prev.first), cost[0]) << "error " << i;
    EXPECT_EQ(static_cast<double>(now.second - prev.second), cost[1]) << "error " << i;
    rc[q] = requester_rc_after(d, rc[q], cf);
    rc[f] = 2 * d.buffer;
    prev = now;
  }
  // The order visits all three phases: rc = 0 (2B + 2), 2B (3B + 2) and in between.
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(*seen.begin(), 2.0 * d.buffer + 2);
  EXPECT_EQ(*seen.rbegin(), 3.0 * d.buffer + 2);
  // Stationary means with both directions equally likely: between 2B+2 and
  // 3B+2, the two streams symmetric, reverse = forward - (2H + 15).
  const PhaseCosts k = stationary_phase_costs(d, 0.5);
  EXPECT_GT(k.ab_per_ab, 2.0 * d.buffer + 2);
  EXPECT_LT(k.ab_per_ab, 3.0 * d.buffer + 2);
  EXPECT_NEAR(k.ab_per_ab, k.ba_per_ba, 1e-9);
  EXPECT_NEAR(k.ab_per_ab - k.ba_per_ab, 2.0 * d.delay_slots + 15, 1e-9);
  // Only A->B failing: every recovery follows a forward one at A (3B + 2).
  EXPECT_NEAR(stationary_phase_costs(d, 1.0).ab_per_ab, 3.0 * d.buffer + 2, 1e-9);
}

TEST(RiflAnalytic, SecondErrorCostsOnlyInTheReplayWindow) {
  // A second A->B error during an A->B recovery: free before the window of
  // the last 4H + 58 slots, a whole further recovery inside it.
  for (double cable : {10.0, 30.0}) {
    const RiflConfig c = one_lane(cable);
    const auto d = derive(c);
    const double H = d.delay_slots, B = d.buffer;
    EXPECT_EQ(replay_window_slots(d), 4 * H + 58);
    // Chain after kPrefixABA: rc_A = 2B, so F1 = 3B + 2; the appended recovery starts at 2B too.
    const double F1 = forward_cost_at(d, 2 * d.buffer);
    ASSERT_EQ(F1, 3 * B + 2);
    const auto base = last_deliveries(c, kPrefixABA);
    auto with = kPrefixABA;
    with.push_back({0, 0, kPrimary});
    const auto one = last_deliveries(c, with);
    ASSERT_EQ(one.first - base.first, F1);
    const double end = 2 * H + 13 + F1, start = end - replay_window_slots(d);
    for (double dd : {0.0, 100.0, start - 2, start - 1, start, start + 1, start + 40, end - 10, end - 1}) {
      auto two = with;
      two.push_back({0, 0, kPrimary + static_cast<std::uint64_t>(dd)});
      const double extra = static_cast<double>(last_deliveries(c, two).first - one.first);
      if (dd < start)
        EXPECT_EQ(extra, 0) << "H " << H << " dd " << dd;
      else
        EXPECT_NEAR(extra, F1, 5) << "H " << H << " dd " << dd;  // a whole recovery (+- the exit's parity)
    }
  }
}

TEST(RiflAnalytic, RestartIsASteadyStateRecovery) {
  // A second A->B hit in the replay window costs a steady-state recovery
  // (3B + 2) whatever the phase of the one it restarts: here a first
  // recovery (rc = 0, 2B + 2) and one after a B->A failure (rc_A = 0 too,
  // the chain's 2B + 2), against the window after kPrefixABA (rc_A = 2B).
  const RiflConfig c = one_lane(10);
  const auto d = derive(c);
  const double B = d.buffer, H = d.delay_slots, W = replay_window_slots(d);
  const RecoveryCost k = restart_cost(d);
  EXPECT_EQ(k.forward_slots, 3 * B + 2);
  EXPECT_GT(k.reverse_slots, 3 * B - 2 * H - 13);
  EXPECT_LT(k.reverse_slots, 3 * B + 2);
  for (const std::vector<Hit>& prefix : {std::vector<Hit>{}, std::vector<Hit>{{0, 1, 5000}}, kPrefixABA}) {
    const std::uint64_t at = prefix.empty() ? 5000 : prefix.back().slot + 2000;
    const auto base = last_deliveries(c, prefix);
    auto one = prefix;
    one.push_back({0, 0, at});
    const auto first = last_deliveries(c, one);
    const double F1 = static_cast<double>(first.first - base.first);
    const double end = 2 * H + 13 + F1;
    double sum_rev = 0;
    int n = 0;
    for (double x : {W - 1, W - 30, 2 * H + 20, 2 * H + 5, 10.0, 1.0}) {
      auto two = one;
      two.push_back({0, 0, at + static_cast<std::uint64_t>(end - x)});
      const auto r = last_deliveries(c, two);
      const double fwd = static_cast<double>(r.first - first.first), rev = static_cast<double>(r.second - first.second);
      EXPECT_NEAR(fwd, k.forward_slots, 3) << "F1 " << F1 << " x " << x;
      EXPECT_NEAR(rev, std::min(3 * B + 2, 3 * B - 2 * H - 13 + x), 3) << "F1 " << F1 << " x " << x;
      sum_rev += rev;
      ++n;
    }
    // Not the phase cost of the recovery it restarts (2B + 2 for the first two).
    if (F1 < 3 * B) {
      EXPECT_GT(sum_rev / n, F1 + B / 2);
    }
  }
}

TEST(RiflAnalytic, ReverseHitDuringARecovery) {
  // A B->A hit on B's retransmit requests during an A->B recovery: absorbed
  // early, then it extends both streams' stalls one slot per slot of delay.
  for (double cable : {2.0, 10.0, 30.0}) {
    const RiflConfig c = one_lane(cable);
    const auto d = derive(c);
    const double H = d.delay_slots;
    // Chain: rc_A = 2B, rc_B = 3B - H - 7 before the primary; the requester B wraps to 0 in it.
    const double F1 = forward_cost_at(d, 2 * d.buffer);
    const std::uint32_t rcb = requester_rc_after(d, 3 * d.buffer - d.delay_slots - 7, F1);
    ASSERT_EQ(rcb, 0u);
    const double F2 = forward_cost_at(d, rcb), rev = 2 * H + 15;
    const auto base = last_deliveries(c, kPrefixABA);
    auto with = kPrefixABA;
    with.push_back({0, 0, kPrimary});
    double worst = 0, worst_tail = 0, sum_ab = 0, sum_ba = 0;
    int absorbed = 0;
    // (The first round trip of requests is left out: a hit there is almost
    // simultaneous with the primary and costs a few slots more.)
    for (double dd = 3 * H + 3; dd <= F1 - H - 13; dd += 11) {
      auto two = with;
      two.push_back({0, 1, kPrimary + static_cast<std::uint64_t>(dd)});
      const auto r = last_deliveries(c, two);
      const double ab = static_cast<double>(r.first - base.first) - F1;  // beyond the primary's own cost
      const double ba = static_cast<double>(r.second - base.second) - (F1 - rev);
      const double mab = reverse_hit_extension(d, F1, F2, true, dd), mba = reverse_hit_extension(d, F1, F2, false, dd);
      // exact to the slot parity up to the tail (dd >= F1 - 3H - 28), within 8 slots in it
      if (dd < F1 - 3 * H - 28)
        worst = std::max({worst, std::fabs(ab - mab), std::fabs(ba - mba)});
      else
        worst_tail = std::max({worst_tail, std::fabs(ab - mab), std::fabs(ba - mba)});
      if (ab == 0 && ba <= 1 && mab == 0 && mba == 0) ++absorbed;
      sum_ab += mab;
      sum_ba += mba;
    }
    EXPECT_LE(worst, 3) << "H " << H;  // slot parity of the interleaving
    EXPECT_LE(worst_tail, 8) << "H " << H;
    EXPECT_GT(absorbed, 3) << "H " << H;
    EXPECT_GT(sum_ab, 0);
    EXPECT_GT(sum_ba, sum_ab);  // the reverse stream's stall ends earlier, so it is extended more
    // Two hits in one recovery: only the first counts (the second falls in
    // the first hit's own recovery); reverse_overlap_expected uses that.
    {
      const double d1 = 0.55 * F1, d2 = 0.7 * F1;
      auto two = with;
      two.push_back({0, 1, kPrimary + static_cast<std::uint64_t>(d1)});
      two.push_back({0, 1, kPrimary + static_cast<std::uint64_t>(d2)});
      const auto r = last_deliveries(c, two);
      const double ab = static_cast<double>(r.first - base.first) - F1;
      const double e1 = reverse_hit_extension(d, F1, F2, true, std::floor(d1)),
                   e2 = reverse_hit_extension(d, F1, F2, true, std::floor(d2));
      ASSERT_GT(e1, 20);
      ASSERT_GT(e2, e1 + 50);
      EXPECT_NEAR(ab, e1, 3) << "H " << H << " e1 " << e1 << " e2 " << e2;
      const double p = 1e-3, s1 = reverse_overlap_slots(d, F1, F2, true);
      EXPECT_LT(reverse_overlap_expected(d, F1, F2, true, p), p * s1);
      EXPECT_NEAR(reverse_overlap_expected(d, F1, F2, true, 1e-9), 1e-9 * s1, 1e-9 * s1 * 1e-4);
    }
    // The closed-form sum is the sum of the per-hit extensions.
    double loop[2] = {0, 0};
    for (double dd = 0; dd <= F1; ++dd)
      for (int s = 0; s < 2; ++s) loop[s] += reverse_hit_extension(d, F1, F2, s == 0, dd);
    EXPECT_NEAR(reverse_overlap_slots(d, F1, F2, true), loop[0], 1e-6);
    EXPECT_NEAR(reverse_overlap_slots(d, F1, F2, false), loop[1], 1e-6);
  }
}

TEST(RiflAnalytic, FlowControlBanksOfBondedLanes) {
  struct Case {
    double cable;
    std::uint32_t fc_off, fc_on;
  };
  for (const Case& k : {Case{10, 34, 68}, Case{10, 60, 120}, Case{30, 60, 200}, Case{2, 0, 0}}) {
    RiflConfig c = small(4, 16'000'000);
    c.retransmit_buffer = 256;
    c.payload_min = c.payload_max = 300;
    c.cable_m = k.cable;
    c.fc_off = k.fc_off;
    c.fc_on = k.fc_on;
    const auto d = derive(c);
    const double B = d.buffer, H = d.delay_slots;
    const LaneBanks bank = lane_banks(c, d);
    EXPECT_EQ(bank.isolated, std::max(0.0, d.fc_off - (2 * H + 1)));
    EXPECT_EQ(bank.overlap, d.fc_on - 12.0);
    const std::vector<Hit> first{{0, 0, 5000}};  // lane 0's first recovery (rc 0)
    const auto a = last_deliveries(c, first);
    // Isolated: lane 1's first recovery (rc 0, 2B + 2) after lane 0's: the stream loses 2B + 2 - isolated bank.
    auto iso = first;
    iso.push_back({1, 0, 15000});
    EXPECT_EQ(last_deliveries(c, iso).first - a.first, 2 * B + 2 - bank.isolated) << k.fc_on;
    // Overlap: lane 0 fails again (rc 2B: 3B + 2); lane 1 fails dd later while paused.
    auto two = first;
    two.push_back({0, 0, 15000});
    const auto b = last_deliveries(c, two);
    const double C1 = 3 * B + 2, C2 = 2 * B + 2;
    for (double dd : {450.0, 500.0}) {
      auto same = two;
      same.push_back({1, 0, 15000 + static_cast<std::uint64_t>(dd)});
      const double ext = dd + C2 - C1 - bank.overlap;
      ASSERT_GT(ext, 0);
      EXPECT_EQ(last_deliveries(c, same).first - b.first, ext) << "fc_on " << d.fc_on << " dd " << dd;
      // The other direction failing on the paused lane: its requester end
      // (stall from H + 3, C_rev = C2 - (2H + 15)) also waits for the resume.
      auto other = two;
      other.push_back({1, 1, 15000 + static_cast<std::uint64_t>(dd)});
      const double ext_rev =
          dd + (H + 3) + (C2 - (2 * H + 15)) + resume_wait_slots(d) - (2 * H + 13) - C1 - bank.overlap;
      EXPECT_NEAR(static_cast<double>(last_deliveries(c, other).first - b.first), ext_rev, 2)
          << "fc_on " << d.fc_on << " dd " << dd;
    }
  }
}

TEST(RiflAnalytic, BandwidthRatioModel) {
  RiflConfig c;  // the study's link: 4 lanes, B = 256, H = 13
  const auto d = derive(c);
  // Error free and the low-BER limit: each failure costs the stream its
  // mean lane stall minus the isolated bank.
  c.ber_ab = c.ber_ba = 0;
  EXPECT_EQ(analytic_bandwidth_ratio(c, d), 1.0);
  c.ber_ab = c.ber_ba = 1e-11;
  const auto t = analytic_terms(c, d);
  const double p = frame_error_probability(1e-11, 256), C = 0.5 * (t.phase.ab_per_ab + t.phase.ab_per_ba);
  EXPECT_NEAR(1 - analytic_bandwidth_ratio(c, d), 4 * 2 * p * (C - t.banks.isolated), 1e-3 * 8 * p * C);
  // Decreasing over the study's sweep, never above the first-order figure at the knee.
  double prev = 1;
  for (double e = -12; e <= -5 + 1e-9; e += 0.25) {
    c.ber_ab = c.ber_ba = std::pow(10.0, e);
    const double r = analytic_bandwidth_ratio(c, d);
    EXPECT_LT(r, prev + 1e-12) << e;
    EXPECT_GT(r, 0) << e;
    prev = r;
  }
  c.ber_ab = c.ber_ba = 1e-6;
  EXPECT_LT(analytic_bandwidth_ratio(c, d), analytic_bandwidth_ratio_first_order(c, d));
  // One lane: ratio = 1 / (1 + p_ab C_own + p_ba C_rev) with the per-stream costs.
  RiflConfig one = c;
  one.lanes = 1;
  one.retransmit_buffer = 256;
  const auto d1 = derive(one);
  const auto t1 = analytic_terms(one, d1);
  EXPECT_EQ(t1.banks.overlap, 0);
  EXPECT_NEAR(t1.ratio_ab, 1 / (1 + t1.p_ab * t1.fail_cost_ab.own + t1.p_ba * t1.fail_cost_ab.rev), 1e-12);
  // A hopeless BER (every recovery restarted) gives 0, not a negative ratio.
  one.ber_ab = one.ber_ba = 0.01;
  EXPECT_EQ(analytic_bandwidth_ratio(one, d1), 0.0);
}

TEST(RiflLink, CorruptedFlowControlFrameIsDelayedNeverLost) {
  RiflConfig c = small(2, 600'000);
  c.fc_buffer = 500;  // derived on = 68, off = 34; bound 68 + 26 + 3 x 64 + 8 = 294
  RiflLink r(c);
  // A long burst on lane 1 (A->B) stalls reordering; lane 0's buffer at B fills.
  std::vector<std::uint64_t> slots;
  for (std::uint64_t t = 2000; t < 6000; ++t) slots.push_back(t);
  bool corrupted = false;
  std::uint64_t corrupted_counter = 0;
  r.set_script({[&](std::uint32_t lane, int dir, std::uint64_t slot, FrameKind k) {
                  std::vector<std::uint16_t> v;
                  if (lane == 1 && dir == 0 && slot < 5000 && slot % 40 == 0) v.push_back(50);
                  if (lane == 0 && dir == 1 && k == FrameKind::fc_pause && !corrupted) {
                    corrupted = true;
                    v.push_back(77);
                  }
                  return v;
                },
                slots});
  std::uint64_t fc_sent = 0, fc_replayed = 0;
  bool paused_seen = false;
  r.set_frame_observer([&](const RiflLink::SentFrame& f) {
    if (f.lane == 0 && f.dir == 1 && f.kind == FrameKind::fc_pause) {
      if (!f.replay && !corrupted_counter) corrupted_counter = f.counter;
      (f.replay ? fc_replayed : fc_sent)++;
    }
    // A paused sender fills its data slots with idle data frames.
    if (f.lane == 0 && f.dir == 0 && f.kind == FrameKind::data_idle && !f.replay && fc_replayed) paused_seen = true;
  });
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  EXPECT_TRUE(corrupted);
  EXPECT_GE(fc_sent, 1u);
  EXPECT_GE(fc_replayed, 1u);  // the corrupted pause went again, from the retransmit buffer
  EXPECT_TRUE(paused_seen);    // ... and took effect
  EXPECT_GE(r.stats(1).fc_pauses, 1u);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(r.stats(d).delivered_segments, r.stats(d).segments);
}

TEST(RiflLink, BondingRestoresOrderUnderSkew) {
  RiflConfig c = small(4, 1'000'000);
  c.lane_skew_ns = {0, 40, 10, 80};
  c.retransmit_buffer = 128;
  c.ber_ab = c.ber_ba = 1e-5;
  c.skip_ahead = false;  // the delivery observer sees every segment
  RiflLink r(c);
  std::map<std::pair<int, std::uint32_t>, std::uint64_t> next;
  bool in_order = true;
  r.set_delivery_observer([&](std::uint32_t lane, int dir, std::uint64_t seg, std::uint64_t) {
    auto& n = next[{dir, lane}];
    if (seg != n) in_order = false;
    n = seg + 1;
  });
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  EXPECT_TRUE(in_order);
  EXPECT_GT(r.stats(0).recoveries, 0u);
  EXPECT_EQ(r.latencies_slots().size(), r.stats(0).packets + r.stats(1).packets);
  c.retransmit_buffer = 0;
  EXPECT_EQ(derive(c).buffer, 256u);  // the 80-ns lane's round trip: 32 + 386.8 ns x 112 Gb/s / 256 = 201
  for (auto l : r.latencies_slots()) ASSERT_GE(l, r.derived().delay_slots + 1);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(r.stats(d).delivered_segments, r.stats(d).segments);
}

TEST(RiflLink, OutOfSyncTakesThePausePath) {
  RiflConfig c = small(1, 400'000);
  RiflLink r(c);
  const std::uint64_t hit = 2500;
  r.set_script({[&](std::uint32_t, int dir, std::uint64_t slot, FrameKind) {
                  return dir == 0 && slot == hit ? std::vector<std::uint16_t>{1} : std::vector<std::uint16_t>{};
                },
                {hit}});
  std::set<TxState> b_states, a_states;
  std::uint64_t b_pause_frames = 0;
  r.set_frame_observer([&](const RiflLink::SentFrame& f) {
    (f.dir == 1 ? b_states : a_states).insert(f.state);
    if (f.dir == 1 && f.kind == FrameKind::ctrl_pause) ++b_pause_frames;
  });
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  EXPECT_EQ(r.stats(0).out_of_sync, 1u);
  EXPECT_TRUE(b_states.count(TxState::send_pause));  // B lost sync: it asks A to pause
  EXPECT_GE(b_pause_frames, 8u);
  EXPECT_TRUE(a_states.count(TxState::pause));  // A saw 8 pause requests
  EXPECT_TRUE(a_states.count(TxState::retrans));
  EXPECT_EQ(r.stats(0).delivered_segments, r.stats(0).segments);
}

TEST(RiflLink, SkipAheadIsExact) {
  for (double ber : {1e-6, 1e-4}) {
    RiflConfig c = small(2, 600'000);
    c.ber_ab = c.ber_ba = ber;
    c.clock_offset_ppm = 200;
    RiflLink fast(c);
    c.skip_ahead = false;
    RiflLink slow(c);
    ASSERT_EQ(fast.run(), RiflLink::Status::done) << fast.diagnosis();
    ASSERT_EQ(slow.run(), RiflLink::Status::done) << slow.diagnosis();
    auto a = fast.latencies_slots(), b = slow.latencies_slots();
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
    EXPECT_EQ(fast.slots(), slow.slots());
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(fast.stats(d).frames, slow.stats(d).frames);
      EXPECT_EQ(fast.stats(d).retransmitted_frames, slow.stats(d).retransmitted_frames);
      EXPECT_EQ(fast.stats(d).clock_comp_slots, slow.stats(d).clock_comp_slots);
      EXPECT_EQ(fast.stats(d).hit_frames, slow.stats(d).hit_frames);
    }
    EXPECT_GT(fast.stats(0).clock_comp_slots, 0u);
    EXPECT_EQ(fast.stats(1).clock_comp_slots, 0u);
  }
}

// Every counter of both directions, the slot count and every packet's
// latency of a skip-ahead run (clean runs jumped, control and replay windows
// settled in closed form) equal those of the same link stepped slot by slot.
void expect_same_links(RiflLink& fast, RiflLink& slow, std::uint32_t lanes);
void expect_same_run(const RiflConfig& c, const std::string& what) {
  SCOPED_TRACE(what);
  RiflConfig cs = c;
  cs.skip_ahead = false;
  RiflLink fast(c), slow(cs);
  expect_same_links(fast, slow, c.lanes);
}
void expect_same_links(RiflLink& fast, RiflLink& slow, std::uint32_t lanes) {
  fast.count_mismatched_frames();
  slow.count_mismatched_frames();
  ASSERT_EQ(fast.run(), RiflLink::Status::done) << fast.diagnosis();
  ASSERT_EQ(slow.run(), RiflLink::Status::done) << slow.diagnosis();
  EXPECT_EQ(fast.slots(), slow.slots());
  // (completion order across the two directions may differ; the multiset is the result)
  auto la = fast.latencies_slots(), lb = slow.latencies_slots();
  std::sort(la.begin(), la.end());
  std::sort(lb.begin(), lb.end());
  EXPECT_EQ(la, lb);
  for (int d = 0; d < 2; ++d) {
    const DirectionStats &a = fast.stats(d), &b = slow.stats(d);
    EXPECT_EQ(a.frames, b.frames);
    EXPECT_EQ(a.fresh_data, b.fresh_data);
    EXPECT_EQ(a.retransmitted_frames, b.retransmitted_frames);
    EXPECT_EQ(a.idle_data, b.idle_data);
    EXPECT_EQ(a.fc_frames, b.fc_frames);
    EXPECT_EQ(a.ctrl_idle, b.ctrl_idle);
    EXPECT_EQ(a.ctrl_pause, b.ctrl_pause);
    EXPECT_EQ(a.ctrl_retrans, b.ctrl_retrans);
    EXPECT_EQ(a.clock_comp_slots, b.clock_comp_slots);
    EXPECT_EQ(a.hit_frames, b.hit_frames);
    EXPECT_EQ(a.bit_errors, b.bit_errors);
    EXPECT_EQ(a.detected_errors, b.detected_errors);
    EXPECT_EQ(a.undetected_errors, b.undetected_errors);
    EXPECT_EQ(a.undetected_misordered, b.undetected_misordered);
    EXPECT_EQ(a.out_of_sync, b.out_of_sync);
    EXPECT_EQ(a.recoveries, b.recoveries);
    EXPECT_EQ(a.fc_pauses, b.fc_pauses);
    EXPECT_EQ(a.delivered_segments, b.delivered_segments);
    EXPECT_EQ(a.last_delivery_slot, b.last_delivery_slot);
    // the exposure to out-of-order acceptance, frame by frame (windows counted in closed form)
    EXPECT_EQ(fast.mismatched_frames(d), slow.mismatched_frames(d));
  }
  for (std::uint32_t l = 0; l < lanes; ++l)
    for (int side = 0; side < 2; ++side) EXPECT_EQ(fast.tx_state(l, side), slow.tx_state(l, side));
}

// Script::skip_ahead: a scripted run skips clean runs and windows between the
// scripted slots, stepping every lane at each of them, and equals the same
// script stepped slot by slot: the isolated-failure probe's script (one
// payload bit of lane 0's A->B data frame every few thousand slots) and a
// dense one (every lane, both directions, payload, CRC and header bits, at
// irregular slots 40 .. 700 apart, so that hits fall inside recoveries).
TEST(RiflLink, ScriptedSkipAheadMatchesStepping) {
  struct Case {
    std::string what;
    std::vector<std::uint64_t> slots;
    std::function<std::vector<std::uint16_t>(std::uint32_t, int, std::uint64_t, FrameKind)> flips;
  };
  std::vector<Case> cases;
  {
    Case a{"probe script", {}, [](std::uint32_t lane, int dir, std::uint64_t, FrameKind k) {
             if (lane != 0 || dir != 0 || k != FrameKind::data_valid) return std::vector<std::uint16_t>{};
             return std::vector<std::uint16_t>{100};
           }};
    for (std::uint64_t k = 1; k <= 12; ++k) a.slots.push_back(k * 7379);
    cases.push_back(a);
  }
  {
    Case b{"dense script", {}, [](std::uint32_t lane, int dir, std::uint64_t slot, FrameKind) {
             const std::uint64_t h = (slot * 2654435761u + lane * 40503u + static_cast<std::uint64_t>(dir) * 977u);
             switch (h % 7) {
               case 0: return std::vector<std::uint16_t>{static_cast<std::uint16_t>(4 + h % 240)};   // payload
               case 1: return std::vector<std::uint16_t>{static_cast<std::uint16_t>(244 + h % 12)};  // CRC
               case 2: return std::vector<std::uint16_t>{static_cast<std::uint16_t>(h % 4)};         // header
               case 3: return std::vector<std::uint16_t>{10, 11};
               default: return std::vector<std::uint16_t>{};
             }
           }};
    std::uint64_t t = 500;
    for (int i = 0; i < 300; ++i) {
      t += 40 + (static_cast<std::uint64_t>(i) * 7919u) % 661;
      b.slots.push_back(t);
    }
    cases.push_back(b);
  }
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs.what);
    RiflConfig c;
    c.bytes_per_direction = 15'000'000;  // busy past the last scripted slot
    RiflLink fast(c), slow(c);
    std::uint64_t calls_fast = 0, calls_slow = 0;
    RiflLink::Script sf{[&](std::uint32_t l, int d, std::uint64_t t, FrameKind k) {
                          ++calls_fast;
                          return cs.flips(l, d, t, k);
                        },
                        cs.slots, true};
    RiflLink::Script ss{[&](std::uint32_t l, int d, std::uint64_t t, FrameKind k) {
                          ++calls_slow;
                          return cs.flips(l, d, t, k);
                        },
                        cs.slots, false};
    fast.set_script(sf);
    slow.set_script(ss);
    expect_same_links(fast, slow, c.lanes);
    EXPECT_EQ(calls_fast, calls_slow);
    EXPECT_GT(fast.stats(0).recoveries, 0u);
    EXPECT_EQ(slow.skipped_lane_slots(), 0u);  // a script without skip_ahead steps every slot
    EXPECT_GT(fast.skipped_lane_slots(), fast.slots() * c.lanes / 2);
  }
}

TEST(RiflLink, SkipAheadMatchesTheSteppedReferenceAcrossBersAndSeeds) {
  // The paper's link (4 lanes, B = 256 from the formula) from a BER where
  // recoveries are rare to one where the link is always recovering, where
  // control and replay windows carry most slots; two seeds each.
  for (double ber : {1e-7, 1e-6, 1e-5, 3e-5})
    for (std::uint64_t seed : {1u, 7u}) {
      RiflConfig c;
      c.bytes_per_direction = ber >= 1e-5 ? 150'000 : 1'500'000;
      c.ber_ab = c.ber_ba = ber;
      c.seed = seed;
      expect_same_run(c, "ber " + std::to_string(ber) + " seed " + std::to_string(seed));
    }
  // Lane-rate buffer, skew, clock offset and unequal BERs.
  RiflConfig c = small(2, 400'000);
  c.ber_ab = 2e-5;
  c.ber_ba = 5e-6;
  c.lane_skew_ns = {0.0, 20.0};
  c.clock_offset_ppm = -300;
  expect_same_run(c, "B = 64, skew, clock offset");
  // Replays and control windows really are skipped: the skip-ahead run
  // advances most slots of a high-BER run without stepping them.
  RiflConfig h;
  h.bytes_per_direction = 150'000;
  h.ber_ab = h.ber_ba = 1e-5;
  RiflLink r(h);
  ASSERT_EQ(r.run(), RiflLink::Status::done);
  EXPECT_GT(r.skipped_lane_slots(), r.slots() * h.lanes / 4);
}

// A slot in which no lane needs stepping (each in a clean run or inside a
// window) is skipped with the rest: the lanes in clean runs advance and
// deliver arithmetically, the windowed ones are settled later, and the skip
// stops at the first window end or disturbance. Exact against the stepped
// reference where that happens most (high BER, 4 and 8 lanes, skew, one
// direction loaded, flow-control pauses).
TEST(RiflLink, SkipAheadIsExactWhileOtherLanesAreInsideWindows) {
  for (double ber : {3e-6, 1e-5})
    for (std::uint64_t seed : {3u, 11u}) {
      RiflConfig c;
      c.bytes_per_direction = ber >= 1e-5 ? 200'000 : 600'000;
      c.ber_ab = c.ber_ba = ber;
      c.seed = seed;
      expect_same_run(c, "4 lanes, ber " + std::to_string(ber) + " seed " + std::to_string(seed));
    }
  RiflConfig c;
  c.lanes = 8;
  c.bytes_per_direction = 300'000;
  c.ber_ab = 1e-5;
  c.ber_ba = 2e-6;
  c.lane_skew_ns = {0, 3, 9, 0, 14, 2, 0, 6};
  c.seed = 5;
  expect_same_run(c, "8 lanes, skew, unequal BERs");
  c.load_ba = false;
  expect_same_run(c, "8 lanes, A->B loaded only");
}

// Lanes paused by flow control (a lane ahead of the reorder frontier sends
// idle data) advance arithmetically like streaming ones, and a skipped run
// stops before the slot whose deliveries cross a threshold: exact against
// the stepped reference with the flow control busy (several seeds, BERs,
// lane skews, one loaded or one erroneous direction).
TEST(RiflLink, SkipAheadIsExactWhileFlowControlPausesLanes) {
  struct Case {
    double ber_ab, ber_ba;
    std::uint64_t seed;
    std::vector<double> skew;
    bool load_ba, errors_ba;
  };
  const std::vector<Case> cases = {
      {1e-5, 1e-5, 3, {}, true, true},
      {3e-6, 3e-6, 11, {}, true, true},
      {2e-6, 2e-6, 5, {0.0, 30.0, 0.0, 60.0}, true, true},
      {1e-5, 0.0, 9, {10.0, 0.0, 0.0, 0.0}, true, false},
      {5e-6, 5e-6, 2, {0.0, 0.0, 45.0, 0.0}, false, true},
  };
  for (const auto& k : cases) {
    RiflConfig c;
    c.bytes_per_direction = 200'000;
    c.ber_ab = k.ber_ab;
    c.ber_ba = k.ber_ba;
    c.seed = k.seed;
    c.lane_skew_ns = k.skew;
    c.load_ba = k.load_ba;
    c.errors_ba = k.errors_ba;
    const std::string what = "ber " + std::to_string(k.ber_ab) + " seed " + std::to_string(k.seed) + " skew " +
                             std::to_string(k.skew.size());
    expect_same_run(c, what);
    RiflLink r(c);
    ASSERT_EQ(r.run(), RiflLink::Status::done);
    EXPECT_GT(r.stats(0).fc_pauses + r.stats(1).fc_pauses, 0u) << what;  // flow control did pause lanes
  }
}

// A recovery window may open while the pipe still holds the far end's
// previous frames (the receiver's flags are followed through them, then
// through the new pattern, and the transmitter must keep its state under
// every one of them). Exact against the stepped reference where the pipe is
// short (1024-bit frames, D = 4) and long (128-bit frames, D = 25; a 60-m
// cable with skew, D = 31 .. 34), with skew, unequal BERs, one direction loaded, and the
// burst channel; and the windows do reach further than those that need a
// full pipe (at 1e-5 most lane slots are not stepped).
TEST(RiflLink, SkipAheadIsExactWithWindowsOpenedWhileThePipeFills) {
  struct Case {
    std::uint32_t frame_bits;
    double cable_m, ber_ab, ber_ba;
    std::uint64_t seed, bytes;
    std::vector<double> skew;
    bool load_ba;
  };
  const std::vector<Case> cases = {
      {1024, 10, 1e-5, 1e-5, 2, 300'000, {}, true},
      {128, 10, 2e-5, 1e-5, 4, 100'000, {}, true},
      {256, 60, 1e-5, 3e-6, 6, 150'000, {0.0, 25.0, 0.0, 7.0}, true},
      {512, 10, 1e-5, 1e-5, 8, 200'000, {}, false},
  };
  for (const auto& k : cases) {
    RiflConfig c;
    c.frame_bits = k.frame_bits;
    c.cable_m = k.cable_m;
    c.ber_ab = k.ber_ab;
    c.ber_ba = k.ber_ba;
    c.seed = k.seed;
    c.bytes_per_direction = k.bytes;
    c.lane_skew_ns = k.skew;
    c.load_ba = k.load_ba;
    expect_same_run(c, std::to_string(k.frame_bits) + "-bit frames, " + std::to_string(k.cable_m) + " m, seed " +
                           std::to_string(k.seed));
  }
  RiflConfig g = small(2, 200'000);
  g.channel = RiflConfig::Channel::gilbert_elliott;
  g.ge.a = 2e-4;
  g.ge.b = 0.2;
  g.ge.e_good = 1e-4;
  g.ge.e_bad = 0.3;
  g.seed = 3;
  expect_same_run(g, "Gilbert-Elliott bursts");
  RiflConfig h;
  h.bytes_per_direction = 150'000;
  h.ber_ab = h.ber_ba = 1e-5;
  RiflLink r(h);
  ASSERT_EQ(r.run(), RiflLink::Status::done);
  EXPECT_GT(r.skipped_lane_slots(), r.slots() * h.lanes * 7 / 10);
}

TEST(RiflLink, HopelessBerEndsWithDiagnosis) {
  RiflConfig c = small(1, 10'000'000);
  c.ber_ab = c.ber_ba = 0.01;
  RiflLink r(c);
  const auto s = r.run();
  EXPECT_TRUE(s == RiflLink::Status::no_progress || s == RiflLink::Status::deadline) << r.diagnosis();
  EXPECT_NE(r.diagnosis().find("RIFL link"), std::string::npos);
}

// An absurd BER: every frame is hit, so the run must stop after
// hopeless_hit_run() slots (not the slot watchdog's ~10^5) with the mechanism
// named; the bound itself keeps a link that can progress (q >= q_min) safe.
TEST(RiflLink, AbsurdBerDiagnosedAfterTheHitRunBound) {
  for (double ber : {0.5, 0.05}) {
    RiflConfig c = small(4, 10'000'000);
    c.ber_ab = c.ber_ba = ber;
    RiflLink r(c);
    ASSERT_EQ(r.run(), RiflLink::Status::no_progress) << r.diagnosis();
    const std::uint64_t ideal = (r.stats(0).segments + c.lanes - 1) / c.lanes;
    const std::uint64_t m = r.hopeless_hit_run(100 * ideal + 10'000'000);
    const double watchdog = 64.0 * (3.0 * r.derived().buffer + 2.0 * r.derived().delay_slots) + 1e5;
    EXPECT_LT(m, watchdog / 20) << ber;
    EXPECT_LE(r.slots(), m + 1) << ber;  // the first lane direction hit m times in a row
    EXPECT_NE(r.diagnosis().find("frames were all corrupted"), std::string::npos) << r.diagnosis();
    // The bound's premise: at q_min, m consecutive hits on any of 2N lane
    // directions within the limit are below 1e-9.
    const double S = 100.0 * ideal + 1e7, q_min = std::pow(1e-6 / S, 1.0 / 9.0);
    EXPECT_LE(2.0 * c.lanes * S * std::pow(1 - q_min, static_cast<double>(m)), 1.01e-9);
  }
  // A high BER that progresses is not cut by it (the last sweep point, 1e-5).
  RiflConfig c = small(4, 2'000'000);
  c.ber_ab = c.ber_ba = 1e-5;
  RiflLink r(c);
  EXPECT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
}

TEST(RiflErrors, GilbertElliottOnFramesReusesTheLinkChannel) {
  fabricsim::link::GeParams p;  // link-layer.md Table 3: a = 0.004, b = 0.08, e_G = 0.001, e_B = 0.6
  GilbertElliottFrames g(p, 256, 5, 0);
  std::vector<std::uint16_t> pos;
  std::uint64_t hits = 0, bits = 0;
  const std::uint64_t n = 200000;
  while (g.next_hit_slot() < n) {
    const auto t = g.next_hit_slot();
    g.take(t, pos);
    ++hits;
    bits += pos.size();
    EXPECT_EQ(std::set<std::uint16_t>(pos.begin(), pos.end()).size(), pos.size());
  }
  const double pb = p.stationary_bad();
  const double expect = n * ((1 - pb) * p.e_good + pb * p.e_bad);
  EXPECT_NEAR(hits, expect, 0.1 * expect);  // bursts: a loose band
  EXPECT_GT(bits, hits * 5);                // BAD-state frames carry up to 24 flipped bits
  // Frame slot t is hit exactly when the UALink channel's step t (attempt 0) is corrupted.
  fabricsim::link::GilbertElliott ref(p, 5, 0);
  GilbertElliottFrames g2(p, 256, 5, 0);
  std::set<std::uint64_t> hit_slots;
  while (g2.next_hit_slot() < 2000) {
    hit_slots.insert(g2.next_hit_slot());
    g2.take(g2.next_hit_slot(), pos);
  }
  for (std::uint64_t t = 0; t < 2000; ++t) EXPECT_EQ(ref.draw(t, 0).magnitude > 0, hit_slots.count(t) == 1) << t;
  RiflConfig c = small(2, 300'000);
  c.channel = RiflConfig::Channel::gilbert_elliott;
  c.ge.e_good = 1e-5;
  c.ge.e_bad = 0.05;
  RiflLink r(c);
  ASSERT_EQ(r.run(), RiflLink::Status::done) << r.diagnosis();
  EXPECT_GT(r.stats(0).hit_frames, 0u);
  EXPECT_GT(r.stats(0).retransmitted_frames, 0u);
  EXPECT_EQ(r.stats(0).delivered_segments, r.stats(0).segments);
}
