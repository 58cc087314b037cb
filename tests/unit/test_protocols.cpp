// The shared error streams of the protocol comparison and RIFL's light FEC
// (models/link/core/bit_errors.h, models/rifl/core/error_stream.h): the
// independent channel's rates against binomial bounds (fixed seeds), the
// stream's independence of who consumes it, and the FEC's correction rule on
// real flipped bits. No SystemC.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "models/link/core/bit_errors.h"
#include "models/link/core/link_engine.h"
#include "models/link/core/policy.h"
#include "models/rifl/core/error_stream.h"
#include "models/rifl/core/rifl_link.h"

using fabricsim::link::BitErrorStream;
using fabricsim::link::kNever;
using fabricsim::link::take_symbol_errors;

namespace {
std::vector<std::uint64_t> error_bits(BitErrorStream s, std::uint64_t below) {
  std::vector<std::uint64_t> v;
  while (s.next() < below) {
    v.push_back(s.next());
    s.pop();
  }
  return v;
}

/// A wire with scripted error bits (ascending).
class ScriptedWire : public fabricsim::rifl::WireErrors {
 public:
  explicit ScriptedWire(std::vector<std::uint64_t> b) : b_(std::move(b)) {}
  std::uint64_t next() override { return i_ < b_.size() ? b_[i_] : kNever; }
  void pop() override { ++i_; }

 private:
  std::vector<std::uint64_t> b_;
  std::size_t i_ = 0;
};
}  // namespace

TEST(IndependentChannel, BitAndSymbolErrorRatesWithinBinomialBounds) {
  // Bits: n = 1e8 at p = 1e-4: mean 1e4, sd = sqrt(n p (1-p)) = 100; 5 sd = 500.
  const auto bits = error_bits(BitErrorStream(1e-4, 101, 0), 100000000ULL);
  EXPECT_NEAR(static_cast<double>(bits.size()), 1e4, 500.0);
  // Symbols: 20000 flits of 5440 bits (STRONG) = 544 symbols of 10 bits each,
  // P(symbol hit) = 1 - (1 - p)^10 at p = 1e-3: mean 1.088e7 x 0.009955 = 108,313,
  // sd ~ sqrt(108313) = 329; 5 sd = 1646. Magnitudes cannot exceed the symbols of a flit.
  BitErrorStream s(1e-3, 7, 2);
  std::uint64_t symbols = 0, wire = 0;
  for (int f = 0; f < 20000; ++f) {
    const auto m = take_symbol_errors(s, wire, 5440, 10);
    EXPECT_LE(m, 544u);
    symbols += m;
    wire += 5440;
  }
  const double p_sym = 1.0 - std::pow(1.0 - 1e-3, 10);
  EXPECT_NEAR(static_cast<double>(symbols), 20000 * 544 * p_sym, 5 * std::sqrt(20000 * 544 * p_sym));
  // Zero BER: no error, ever.
  EXPECT_EQ(BitErrorStream(0.0, 1, 0).next(), kNever);
}

TEST(IndependentChannel, SymbolErrorsCountDistinctSymbols) {
  // The magnitude of a transmission is the number of distinct bit / 10 values
  // among its error bits (at 1 % some symbol holds two).
  BitErrorStream s(0.01, 3, 0), copy = s;
  const auto bits = error_bits(copy, 5440);
  std::set<std::uint64_t> syms;
  for (auto b : bits) syms.insert(b / 10);
  ASSERT_GT(bits.size(), syms.size());  // some symbol holds two error bits at 1 %
  EXPECT_EQ(take_symbol_errors(s, 0, 5440, 10), syms.size());
  EXPECT_GE(s.next(), 5440u);  // consumed exactly the flit's errors
}

TEST(IndependentChannel, StreamIsIndependentOfTheConsumer) {
  // The same (seed, stream): the UALink engine's forward wire, RIFL frames of
  // 256 bits and the raw stream see the same wire bits flipped.
  const double ber = 2e-5;
  const std::uint64_t seed = 42;
  const auto raw = error_bits(BitErrorStream(ber, seed, 0), 5440ULL * 4000);
  fabricsim::rifl::IndependentBitErrors frames(ber, 256, seed, 0);
  std::vector<std::uint64_t> via_frames;
  std::vector<std::uint16_t> pos;
  while (frames.next_hit_slot() * 256 < 5440ULL * 4000) {
    const auto t = frames.next_hit_slot();
    frames.take(t, pos);
    for (auto p : pos)
      if (t * 256 + p < 5440ULL * 4000) via_frames.push_back(t * 256 + p);
  }
  EXPECT_EQ(via_frames, raw);

  // The UALink engine (fixed-strong: every transmission 5440 wire bits) sees,
  // per transmission, the symbols of those bits: recompute them from the raw bits.
  fabricsim::link::LinkConfig c;
  c.channel_model = fabricsim::link::LinkConfig::ChannelModel::independent;
  c.ber = ber;
  c.policy_name = "fixed-strong";
  fabricsim::link::LinkEngine eng(c, fabricsim::link::make_policy(c.policy_name, c.fec_menu, c.policy), seed, 0);
  std::vector<std::uint32_t> mags;
  eng.set_tx_observer([&](const fabricsim::link::TxRecord& r) { mags.push_back(r.magnitude); });
  for (int i = 0; i < 3000; ++i) eng.offer(static_cast<fabricsim::link::ps_t>(i) * 14000);
  ASSERT_EQ(eng.run_to_completion(), fabricsim::link::LinkEngine::Status::done);
  ASSERT_GE(mags.size(), 3000u);
  std::uint64_t hit = 0;
  for (std::size_t k = 0; k < mags.size() && (k + 1) * 5440 <= 5440ULL * 4000; ++k) {
    std::set<std::uint64_t> syms;
    for (auto b : raw)
      if (b >= k * 5440 && b < (k + 1) * 5440) syms.insert((b - k * 5440) / 10);
    EXPECT_EQ(mags[k], syms.size()) << "transmission " << k;
    hit += syms.empty() ? 0 : 1;
  }
  EXPECT_GT(hit, 100u);  // 5440 x 2e-5 = 0.11 errors per flit: ~300 hit flits
  EXPECT_EQ(eng.wire_bits(), mags.size() * 5440);
}

TEST(RiflFec, AtMostTSymbolErrorsAreCorrectedTPlusOneReachTheCrc) {
  // 256-bit frames, codeword = 20 frames (5120 bits) + 128 parity bits (LIGHT: 2.5 %), t = 4.
  const std::uint64_t n = 5248;
  std::vector<std::uint64_t> b;
  // Codeword 0: symbols 0 (bits 1 and 5 count once), 30, 200, 250 and 513 (parity): 5 > t -> fails.
  // Codeword 1: symbols 0, 30, 200 and 520 (parity): 4 = t -> corrected.
  // Codeword 2: symbols 0, 2, 4, 6 (frame 0) and 80 (frame 3): 5 -> fails: the frames keep their flipped bits.
  for (auto o : {1, 5, 300, 2000, 2500}) b.push_back(o);
  b.push_back(5130);  // parity
  for (auto o : {1, 5, 300, 2000, 5200}) b.push_back(n + o);
  for (auto o : {0, 20, 40, 60, 800}) b.push_back(2 * n + o);
  fabricsim::rifl::WireFrames w(std::make_unique<ScriptedWire>(b), 256, 20, 128, 10, 4);
  std::vector<std::uint16_t> pos;
  // Codeword 0: frames 0 (bits 1, 5), 1 (300 = 256 + 44), 7 (2000 = 7 x 256 + 208), 9 (2500 = 9 x 256 + 196).
  ASSERT_EQ(w.next_hit_slot(), 0u);
  w.take(0, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{1, 5}));
  ASSERT_EQ(w.next_hit_slot(), 1u);
  w.take(1, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{44}));
  ASSERT_EQ(w.next_hit_slot(), 7u);
  w.take(7, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{208}));
  ASSERT_EQ(w.next_hit_slot(), 9u);
  w.take(9, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{196}));
  // Codeword 1: corrected: reported once, with nothing flipped.
  const auto s1 = w.next_hit_slot();
  EXPECT_EQ(s1, 20u);  // its first errored frame
  w.take(s1, pos);
  EXPECT_TRUE(pos.empty());
  // Codeword 2: frames 40 and 43 hit.
  ASSERT_EQ(w.next_hit_slot(), 40u);
  w.take(40, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{0, 20, 40, 60}));
  ASSERT_EQ(w.next_hit_slot(), 43u);
  w.take(43, pos);
  EXPECT_EQ(pos, (std::vector<std::uint16_t>{32}));
  EXPECT_EQ(w.next_hit_slot(), kNever);
  EXPECT_EQ(w.codewords_corrected(), 1u);
  EXPECT_EQ(w.codewords_failed(), 2u);
  EXPECT_EQ(w.symbols_corrected(), 4u);
  EXPECT_EQ(fabricsim::rifl::codeword_symbol_errors({1, 5, 300, 2000, 5200}, 10), 4u);
}

TEST(RiflFec, LightFecOnTheLinkCorrectsAndChargesItsOverheadAndLatency) {
  using fabricsim::rifl::RiflConfig;
  RiflConfig c;
  c.lanes = 1;
  c.lane_rate_bps = 400e9;
  c.cable_m = 0;
  c.transceiver_ns = 20;
  c.load_ba = false;
  c.payload_min = c.payload_max = 640;
  c.bytes_per_direction = 6400000;
  c.ber_ab = 2e-5;
  c.errors_ba = false;
  const auto plain = fabricsim::rifl::derive(c);
  fabricsim::rifl::RiflLink a(c);
  ASSERT_EQ(a.run(), fabricsim::rifl::RiflLink::Status::done);
  EXPECT_GT(a.stats(0).retransmitted_frames, 0u);  // 256 x 2e-5: a frame error every ~200 frames

  c.fec_on = true;
  c.fec = fabricsim::link::default_fec_menu()[1];  // LIGHT: 2.5 %, 5 ns, 4 symbols
  const auto d = fabricsim::rifl::derive(c);
  EXPECT_EQ(d.fec_frames, 20u);
  EXPECT_EQ(d.fec_parity_bits, 128u);
  EXPECT_DOUBLE_EQ(d.slot_ns, 5248.0 / 20 / 400e9 * 1e9);  // frames stretched by the parity
  EXPECT_NEAR(d.one_way_ns - plain.one_way_ns, 5248 / 400.0 + 5.0, 1e-9);  // codeword + decode
  fabricsim::rifl::RiflLink b(c);
  ASSERT_EQ(b.run(), fabricsim::rifl::RiflLink::Status::done);
  // 5248 x 2e-5 = 0.1 errors per codeword; P(>= 5 symbols) ~ 1e-7: every codeword corrected.
  EXPECT_EQ(b.stats(0).retransmitted_frames, 0u);
  EXPECT_EQ(b.stats(0).hit_frames, 0u);
  const auto s = b.stats_with_fec(0);
  EXPECT_GT(s.fec_corrected, 500u);  // ~0.1 x 10000 codewords hit
  EXPECT_EQ(s.fec_failed, 0u);
  EXPECT_GT(a.slots(), b.slots());  // replays cost more than 2.5 % here
}
