// Unit tests for models/link/core/link_engine.{h,cpp}: the event-driven
// data-link machine (link-layer.md §1, §2, §4, §10).
//
// Unless a test says otherwise: LinkConfig defaults (paper Table 3), policy
// fixed-strong, channel error probabilities 0 (e_good = e_bad = 0) so only
// scripted errors occur; magnitude 30 fails every profile (c <= 15).
//
// Timing constants (ps), derived by hand:
//   STRONG wire time   640 B x 1.0625 = 680 B = 5440 bit / 400 Gb/s = 13600
//   forward latency    13600 (wire) + 20000 (propagation) + 12000 (STRONG decode) = 45600
//   control flit       640 B at 400 Gb/s = 12800
//   ACK latency        50000 (base) + 12800 (serialize) + 20000 (propagation) = 82800
//   send -> ACK back   45600 + 82800 = 128400
//   LIGHT: wire 13120, decode 5000.

#include "models/link/core/link_engine.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/link/core/ge_channel.h"
#include "models/link/core/policy.h"

namespace {

using fabricsim::link::GilbertElliott;
using fabricsim::link::kNever;
using fabricsim::link::LinkConfig;
using fabricsim::link::LinkEngine;
using fabricsim::link::LinkSemantics;
using fabricsim::link::LinkStats;
using fabricsim::link::make_policy;
using fabricsim::link::ps_t;
using fabricsim::link::TxRecord;

using Status = LinkEngine::Status;
using TxQueue = LinkSemantics::TxQueue;

constexpr std::size_t kLight = 1, kStrong = 2;
constexpr ps_t kFwd = 45600;     // STRONG send -> delivery
constexpr ps_t kWire = 13600;    // STRONG wire time
constexpr ps_t kAckLat = 82800;  // delivery -> ACK arrival at the transmitter

// Scenarios are written for the recall semantics unless a test says otherwise
// (the shipped default is fifo; tests that cover fifo set it).
LinkConfig clean_config(const std::string& policy = "fixed-strong") {
  LinkConfig c;
  c.semantics.tx_queue = LinkSemantics::TxQueue::recall;
  c.channel.e_good = 0.0;
  c.channel.e_bad = 0.0;
  c.policy_name = policy;
  return c;
}

std::unique_ptr<LinkEngine> make_engine(const LinkConfig& c, std::uint64_t seed = 1, std::uint64_t link = 0) {
  return std::make_unique<LinkEngine>(c, make_policy(c.policy_name, c.fec_menu, c.policy), seed, link);
}

/// Engine plus a recording observer and a table-driven error script.
struct Harness {
  std::unique_ptr<LinkEngine> eng;
  std::vector<TxRecord> recs;
  std::map<std::pair<std::uint64_t, std::uint32_t>, int> script;  // (seq, attempt) -> magnitude
  std::map<std::uint64_t, int> every_attempt;                     // seq -> magnitude for any attempt

  explicit Harness(const LinkConfig& c, std::uint64_t seed = 1) : eng(make_engine(c, seed)) {
    eng->set_tx_observer([this](const TxRecord& r) { recs.push_back(r); });
    eng->set_error_script([this](std::uint64_t seq, std::uint32_t attempt) {
      auto e = every_attempt.find(seq);
      if (e != every_attempt.end()) return e->second;
      auto it = script.find({seq, attempt});
      return it == script.end() ? -1 : it->second;
    });
  }
  void offer_periodic(std::uint64_t n, ps_t period, ps_t start = 0) {
    for (std::uint64_t i = 0; i < n; ++i) eng->offer(start + i * period);
  }
  std::vector<const TxRecord*> of_seq(std::uint64_t seq) const {
    std::vector<const TxRecord*> v;
    for (const auto& r : recs)
      if (r.seq == seq) v.push_back(&r);
    return v;
  }
  std::vector<const TxRecord*> replays() const {
    std::vector<const TxRecord*> v;
    for (const auto& r : recs)
      if (r.replay) v.push_back(&r);
    return v;
  }
};

void expect_in_order_exactly_once(const LinkEngine& e) {
  const LinkStats& s = e.stats();
  EXPECT_EQ(s.delivered, s.offered);
  EXPECT_EQ(s.first_transmissions, s.offered);  // every seq admitted and first-sent once
  for (std::uint64_t i = 0; i < s.offered; ++i) {
    ASSERT_NE(e.delivery_time(i), kNever) << "seq " << i << " never delivered";
    ASSERT_GE(e.delivery_time(i), e.arrival_time(i)) << i;
    if (i > 0) {
      ASSERT_GE(e.delivery_time(i), e.delivery_time(i - 1)) << "seq " << i << " delivered out of order";
    }
  }
}

// ---------------------------------------------------------------------------
// Progress hook (a long run's progress line)

TEST(LinkEngine, ProgressHookReportsTimeAndDeliveriesWithoutChangingTheRun) {
  // Same stream with and without the hook: identical transmissions; the hook
  // sees non-decreasing (now, delivered), the last report no later than the end.
  const std::uint64_t n = 40000;  // >= 2^12 events in each half
  Harness plain(clean_config());
  plain.offer_periodic(n, 2000);
  ASSERT_EQ(plain.eng->run_to_completion(), Status::done);
  Harness h(clean_config());
  std::vector<std::pair<ps_t, std::uint64_t>> seen;
  h.eng->set_progress_hook([&](ps_t t, std::uint64_t d) { seen.emplace_back(t, d); });
  h.offer_periodic(n, 2000);
  h.eng->run_before(n * 1000);  // half the stream offered by then
  const std::size_t at_half = seen.size();
  ASSERT_EQ(h.eng->run_to_completion(), Status::done);
  ASSERT_EQ(h.recs.size(), plain.recs.size());
  for (std::size_t i = 0; i < h.recs.size(); ++i) ASSERT_EQ(h.recs[i].start_ps, plain.recs[i].start_ps) << i;
  ASSERT_GE(at_half, 1u);
  ASSERT_GT(seen.size(), at_half);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i].first, seen[i - 1].first);
    EXPECT_GE(seen[i].second, seen[i - 1].second);
  }
  EXPECT_LE(seen.back().first, h.eng->now());
  EXPECT_LE(seen.back().second, n);
  EXPECT_GT(seen.back().second, 0u);
}

// ---------------------------------------------------------------------------
// Error-free timing

TEST(LinkEngine, SparseStreamExactLatencyAndAckRelease) {
  // One flit every 1 us: flit i sent at i us, delivered at i us + 45600 ps,
  // its ACK arrives at i us + 45600 + 82800 = i us + 128400 ps.
  Harness h(clean_config());
  const std::uint64_t n = 20;
  h.offer_periodic(n, 1000000);
  for (std::uint64_t i = 0; i < n; ++i) {
    const ps_t a = i * 1000000;
    h.eng->run_before(a + kFwd);  // the decode at exactly a + 45600 is not yet processed
    EXPECT_EQ(h.eng->delivered(), i);
    h.eng->run_before(a + kFwd + 1);
    EXPECT_EQ(h.eng->delivered(), i + 1);
    EXPECT_EQ(h.eng->delivery_time(i), a + 45600);
    h.eng->run_before(a + 128400);  // ACK not yet in
    EXPECT_EQ(h.eng->tx_replay().occupancy(), 1u);
    h.eng->run_before(a + 128401);  // ACK processed at a + 128400
    EXPECT_EQ(h.eng->tx_replay().occupancy(), 0u);
    EXPECT_EQ(h.eng->tx_replay().oldest(), i + 1);
  }
  EXPECT_EQ(h.eng->run_to_completion(), Status::done);
  ASSERT_EQ(h.recs.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const TxRecord& r = h.recs[i];
    EXPECT_EQ(r.start_ps, i * 1000000);
    EXPECT_EQ(r.seq, i);
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_FALSE(r.replay);
    EXPECT_EQ(r.profile, kStrong);
    EXPECT_EQ(r.magnitude, 0u);
    EXPECT_EQ(r.occupancy, 1u);  // the flit itself
    EXPECT_EQ(r.window, 16u);
  }
  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.offered, n);
  EXPECT_EQ(s.delivered, n);
  EXPECT_EQ(s.transmissions, n);
  EXPECT_EQ(s.retransmissions, 0u);
  EXPECT_EQ(s.profile_transmissions, (std::vector<std::uint64_t>{0, 0, n}));
  EXPECT_EQ(s.fec_bytes, n * 40);  // 640 x 0.0625 = 40 parity bytes per flit
  EXPECT_EQ(s.control_flits, n);   // one ACK per payload flit
  EXPECT_EQ(s.control_bytes, n * 640);
  EXPECT_EQ(s.max_occupancy, 1u);
  EXPECT_EQ(s.first_arrival_ps, 0u);
  EXPECT_EQ(s.last_delivery_ps, 19000000u + 45600u);
  EXPECT_EQ(s.raw_errors, 0u);
  EXPECT_EQ(s.requests_generated, 0u);
  EXPECT_EQ(s.admission_stall_window_ps, 0u);
  EXPECT_EQ(s.admission_stall_replay_ps, 0u);
}

TEST(LinkEngine, BackToBackSerialization) {
  // Three flits at t=0: sent at 0, 13600, 27200; delivered 45600, 59200, 72800.
  Harness h(clean_config());
  h.offer_periodic(3, 0);
  EXPECT_EQ(h.eng->run_to_completion(), Status::done);
  for (std::uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.recs[i].start_ps, i * kWire);
    EXPECT_EQ(h.eng->delivery_time(i), i * kWire + kFwd);
  }
}

TEST(LinkEngine, LightProfileTiming) {
  // predictive-fec with W = W_H; first 3 flits STRONG (prior starts at 0.0476),
  // after 3 clean decodes the filter's prior is 0.008496 -> LIGHT (reference row 2).
  // Sparse: flit i at i us. Flits 0,1,2 decode before flit 3 is sent.
  // LIGHT latency = 13120 + 20000 + 5000 = 38120.
  Harness h(clean_config("predictive-fec"));
  h.offer_periodic(5, 1000000);
  EXPECT_EQ(h.eng->run_to_completion(), Status::done);
  for (std::uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(h.recs[i].profile, kStrong);
    EXPECT_EQ(h.eng->delivery_time(i), i * 1000000 + 45600);
  }
  for (std::uint64_t i = 3; i < 5; ++i) {
    EXPECT_EQ(h.recs[i].profile, kLight);
    EXPECT_EQ(h.eng->delivery_time(i), i * 1000000 + 38120);
  }
  EXPECT_EQ(h.eng->stats().fec_bytes, 3u * 40 + 2u * 16);  // 640 x 0.025 = 16
  EXPECT_EQ(h.eng->stats().profile_switches, 1u);
}

// Engines share one per-profile timing table per configuration (flit size,
// forward rate, propagation, FEC menu): engines of different configurations,
// alive at the same time, each keep their own wire time, flight time (propagation +
// decode delay) and parity bytes.
TEST(LinkEngine, ProfileTimingPerConfigurationWhileOthersLive) {
  LinkConfig half = clean_config();
  half.flit_bytes = 320;  // 340 B on the wire with STRONG: 6800 ps at 400 Gb/s
  LinkConfig slow = clean_config();
  slow.forward_rate_bps = 200e9;  // 680 B: 27200 ps
  LinkConfig light = clean_config();
  light.fec_menu[kStrong].overhead = 0.025;  // 656 B: 13120 ps, 16 parity bytes
  light.fec_menu[kStrong].decode_delay_ps = 5000;
  LinkConfig far = clean_config();
  far.propagation_ps = 50000;
  std::vector<std::unique_ptr<LinkEngine>> engines;
  for (const LinkConfig* c : {&half, &slow, &light, &far}) engines.push_back(make_engine(*c));
  engines.push_back(make_engine(clean_config()));
  const ps_t expect[] = {6800 + 20000 + 12000, 27200 + 20000 + 12000, 13120 + 20000 + 5000, 13600 + 50000 + 12000,
                         kFwd};
  const std::uint64_t parity[] = {20, 40, 16, 40, 40};
  for (std::size_t i = 0; i < engines.size(); ++i) {
    engines[i]->offer(0);
    ASSERT_EQ(engines[i]->run_to_completion(), Status::done);
    EXPECT_EQ(engines[i]->delivery_time(0), expect[i]) << "engine " << i;
    EXPECT_EQ(engines[i]->stats().fec_bytes, parity[i]) << "engine " << i;
    EXPECT_EQ(engines[i]->stats().profile_transmissions[kStrong], 1u) << "engine " << i;
  }
}

// ---------------------------------------------------------------------------
// Scenario A: period 14 ns, 30 flits, seq 5 fails on its first attempt.
//
// Hand trace (recall; fifo is identical here because its queue is empty when
// the request arrives):
//  * first attempts j = 0..14 at 14000 j (13600 < 14000: serializer idle each time);
//    delivered (j <= 4) at 14000 j + 45600; ACK j arrives 14000 j + 128400
//    (ACK 4 at 184400, so TxReplay = [5, 15) when the request arrives).
//  * seq 5 decodes (fails) at 70000 + 45600 = 115600. The ACK of 4 (generated
//    101600) occupies the reverse link 151600..164400; the 3 request copies are
//    ready at 165600: serialized 165600, 178400, 191200 -> arrive 198400,
//    211200, 224000.
//  * at 198400 flit 14 (sent 196000) is on the wire until 209600. Replay
//    5..14 at 209600 + 13600 k (k = 0..9; 14 at 332000). Copies 2, 3 ignored.
//  * replayed j delivered at 255200 + 13600 (j-5); its ACK at 338000 + 13600 (j-5)
//    (none during the replay, which ends at 332000).
//  * flit 15 (arrived 210000) is sent at 332000 + 13600 = 345600, then back to
//    back: j >= 15 sent at 345600 + 13600 (j-15), delivered +45600 =
//    391200 + 13600 (j-15); flit 29 at 581600.

ps_t scenario_a_delivery(std::uint64_t j) {
  if (j <= 4) return 14000 * j + 45600;
  if (j <= 14) return 255200 + 13600 * (j - 5);
  return 391200 + 13600 * (j - 15);
}

LinkConfig with_queue(LinkConfig c, TxQueue q) {
  c.semantics.tx_queue = q;
  return c;
}

class ScenarioA : public ::testing::TestWithParam<TxQueue> {};

TEST_P(ScenarioA, ReplayFromRequestedSeqThroughTailInOrder) {
  Harness h(with_queue(clean_config(), GetParam()));
  h.script[{5, 1}] = 30;
  h.offer_periodic(30, 14000);
  ASSERT_EQ(h.eng->run_to_completion(), Status::done) << h.eng->diagnosis();

  // Transmission order: first attempts 0..14, replays 5..14, first attempts 15..29.
  ASSERT_EQ(h.recs.size(), 40u);
  for (std::uint64_t j = 0; j <= 14; ++j) {
    const TxRecord& r = h.recs[j];
    EXPECT_EQ(r.seq, j);
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_FALSE(r.replay);
    EXPECT_EQ(r.start_ps, 14000 * j);
  }
  EXPECT_EQ(h.recs[5].magnitude, 30u);
  for (std::uint64_t k = 0; k < 10; ++k) {
    const TxRecord& r = h.recs[15 + k];
    EXPECT_EQ(r.seq, 5 + k);
    EXPECT_EQ(r.attempt, 2u);
    EXPECT_TRUE(r.replay);
    EXPECT_EQ(r.start_ps, 209600 + 13600 * k);
    EXPECT_EQ(r.profile, kStrong);
  }
  for (std::uint64_t j = 15; j < 30; ++j) {
    const TxRecord& r = h.recs[25 + (j - 15)];
    EXPECT_EQ(r.seq, j);
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_FALSE(r.replay);
    EXPECT_EQ(r.start_ps, 345600 + 13600 * (j - 15));
  }
  for (std::uint64_t j = 0; j < 30; ++j) EXPECT_EQ(h.eng->delivery_time(j), scenario_a_delivery(j)) << j;
  expect_in_order_exactly_once(*h.eng);

  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.transmissions, 40u);
  EXPECT_EQ(s.first_transmissions, 30u);
  EXPECT_EQ(s.retransmissions, 10u);
  EXPECT_EQ(h.eng->replayed_flits(), 10u);
  EXPECT_EQ(s.replay_scheduled, 10u);  // suffix [5, 15)
  EXPECT_EQ(s.first_attempt_errors, 1u);
  EXPECT_EQ(s.raw_errors, 1u);
  EXPECT_EQ(s.residual_errors, 1u);
  EXPECT_EQ(s.out_of_order_dropped, 9u);  // first attempts of 6..14
  EXPECT_EQ(s.duplicates_dropped, 0u);
  EXPECT_EQ(s.requests_generated, 1u);
  EXPECT_EQ(s.request_copies_received, 3u);  // 3 x requests_generated
  EXPECT_EQ(s.requests_served, 1u);
  EXPECT_EQ(s.requests_ignored, 2u);  // 2 x served
  EXPECT_EQ(s.stale_copies, 0u);
  EXPECT_EQ(s.control_flits, 33u);  // 30 ACKs + 3 request copies
  EXPECT_EQ(s.fec_bytes, 40u * 40);
  EXPECT_EQ(s.terminal_failures, 0u);
  EXPECT_EQ(s.last_delivery_ps, 581600u);
}

INSTANTIATE_TEST_SUITE_P(TxQueueSemantics, ScenarioA, ::testing::Values(TxQueue::recall, TxQueue::fifo),
                         [](const auto& info) { return info.param == TxQueue::recall ? "recall" : "fifo"; });

TEST(LinkEngine, ReplayRequestIsNotAnAck) {
  // Scenario A, recall. Entries < 5 are released by the ACKs of 0..4 at
  // 14000 j + 128400 (ACK 4 at 184400); the request for 5 (198400) releases
  // nothing; 5 is released only by its own ACK at 338000.
  Harness h(clean_config());
  h.script[{5, 1}] = 30;
  h.offer_periodic(30, 14000);
  auto& e = *h.eng;
  e.run_before(184400);  // ACK 3 (170400) processed, ACK 4 not yet
  EXPECT_EQ(e.tx_replay().oldest(), 4u);
  e.run_before(184401);
  EXPECT_EQ(e.tx_replay().oldest(), 5u);
  e.run_before(198400);  // just before the first request copy
  EXPECT_FALSE(e.replay_active());
  EXPECT_EQ(e.tx_replay().oldest(), 5u);
  EXPECT_EQ(e.tx_replay().next_seq(), 15u);  // flits 0..14 admitted
  EXPECT_EQ(e.tx_replay().occupancy(), 10u);
  e.run_before(198401);  // request served
  EXPECT_TRUE(e.replay_active());
  EXPECT_EQ(e.stats().requests_served, 1u);
  EXPECT_EQ(e.tx_replay().oldest(), 5u);  // s..tail still held
  EXPECT_EQ(e.tx_replay().next_seq(), 15u);
  for (std::uint64_t s = 5; s < 15; ++s) EXPECT_TRUE(e.tx_replay().retained(s)) << s;
  e.run_before(338000);  // whole replay done, ACK of the replayed 5 not yet in
  EXPECT_EQ(e.tx_replay().oldest(), 5u);
  EXPECT_EQ(e.tx_replay().attempts(5), 2u);
  e.run_before(338001);
  EXPECT_EQ(e.tx_replay().oldest(), 6u);
}

TEST(LinkEngine, AdmissionBlockedDuringReplayRecall) {
  Harness h(clean_config());
  h.script[{5, 1}] = 30;
  h.offer_periodic(30, 14000);
  auto& e = *h.eng;
  // During the replay (198400..332000) nothing new is admitted although flits
  // 15.. arrive from 210000 on.
  for (ps_t t = 198401; t <= 332000; t += 3000) {
    e.run_before(t);
    ASSERT_TRUE(e.replay_active()) << t;
    ASSERT_EQ(e.tx_replay().next_seq(), 15u) << t;
  }
  ASSERT_EQ(e.run_to_completion(), Status::done);
  // No attempt==1 record between the first and last replay record.
  const auto reps = h.replays();
  ASSERT_EQ(reps.size(), 10u);
  const auto first = reps.front() - h.recs.data(), last = reps.back() - h.recs.data();
  for (auto i = first; i <= last; ++i) {
    EXPECT_TRUE(h.recs[i].replay) << i;
    EXPECT_NE(h.recs[i].attempt, 1u) << i;
  }
  // Flit 15 waited from its arrival (210000) until the replay ended (332000).
  EXPECT_EQ(e.stats().admission_stall_replay_ps, 332000u - 210000u);
  EXPECT_EQ(e.stats().admission_stall_window_ps, 0u);
}

// ---------------------------------------------------------------------------
// Scenario D (dense): 40 flits all offered at t = 0, seq 20 fails once.
//
// Common: flit k's first attempt at 13600 k while the serializer streams;
// ACK of j arrives 13600 j + 128400; seq 20 sent 272000, fails at 317600; ACK
// 19 (generated 304000) occupies the reverse link 354000..366800, request
// copies ready 367600 -> arrive 400400, 413200, 426000. At 400400 flit 29
// (sent 394400) is on the wire until 408000.
//
// recall: admission happens at serialization, TxReplay = [20, 30) at 400400.
//   Replay 20..29 at 408000 + 13600 k (29 at 530400); 30..39 at 544000 + 13600 (j-30).
//   Deliveries: j<20: 13600 j + 45600; 20..29: 453600 + 13600 (j-20);
//   30..39: 589600 + 13600 (j-30).
// fifo: admitted flits wait in the queue and count toward occupancy (16): at
//   400400 TxReplay = [20, 36) with 30..35 queued. The suffix copies 20..35
//   go behind them: 30..35 first attempts at 408000 + 13600 (j-30) (35 at
//   476000), replays 20..35 at 489600 + 13600 (j-20) (35 at 693600); then
//   36..39 (admitted at 693600) at 707200 + 13600 (j-36).
//   Deliveries: j<20: 13600 j + 45600; 20..35: 535200 + 13600 (j-20);
//   36..39: 752800 + 13600 (j-36).

TEST(LinkEngine, DenseReplayRecall) {
  Harness h(clean_config());
  h.script[{20, 1}] = 30;
  h.offer_periodic(40, 0);
  auto& e = *h.eng;
  e.run_before(400401);
  EXPECT_TRUE(e.replay_active());
  EXPECT_EQ(e.tx_replay().oldest(), 20u);
  EXPECT_EQ(e.tx_replay().next_seq(), 30u);
  ASSERT_EQ(e.run_to_completion(), Status::done);
  ASSERT_EQ(h.recs.size(), 50u);
  for (std::uint64_t k = 0; k < 30; ++k) {
    EXPECT_EQ(h.recs[k].seq, k);
    EXPECT_EQ(h.recs[k].start_ps, 13600 * k);
    EXPECT_EQ(h.recs[k].occupancy, std::min<std::uint64_t>(k + 1, 10));  // RTT holds ~10 in flight
  }
  for (std::uint64_t k = 0; k < 10; ++k) {
    const TxRecord& r = h.recs[30 + k];
    EXPECT_EQ(r.seq, 20 + k);
    EXPECT_TRUE(r.replay);
    EXPECT_EQ(r.attempt, 2u);
    EXPECT_EQ(r.start_ps, 408000 + 13600 * k);
    EXPECT_EQ(r.occupancy, 10u);  // no ACK arrives during the replay
  }
  for (std::uint64_t j = 30; j < 40; ++j) {
    EXPECT_EQ(h.recs[40 + (j - 30)].seq, j);
    EXPECT_EQ(h.recs[40 + (j - 30)].attempt, 1u);
    EXPECT_EQ(h.recs[40 + (j - 30)].start_ps, 544000 + 13600 * (j - 30));
  }
  for (std::uint64_t j = 0; j < 40; ++j) {
    const ps_t want = j < 20 ? 13600 * j + 45600 : j < 30 ? 453600 + 13600 * (j - 20) : 589600 + 13600 * (j - 30);
    EXPECT_EQ(e.delivery_time(j), want) << j;
  }
  expect_in_order_exactly_once(e);
  EXPECT_EQ(e.stats().retransmissions, 10u);
  EXPECT_EQ(e.stats().out_of_order_dropped, 9u);
  // Replay stall: from the request (400400) to the end of the replay (530400).
  EXPECT_EQ(e.stats().admission_stall_replay_ps, 130000u);
  EXPECT_EQ(e.stats().admission_stall_window_ps, 0u);
}

TEST(LinkEngine, DenseReplayFifoAppendsBehindQueue) {
  Harness h(with_queue(clean_config(), TxQueue::fifo));
  h.script[{20, 1}] = 30;
  h.offer_periodic(40, 0);
  auto& e = *h.eng;
  e.run_before(400400);
  EXPECT_EQ(e.tx_replay().oldest(), 20u);
  EXPECT_EQ(e.tx_replay().next_seq(), 36u);  // 30..35 admitted and queued
  EXPECT_EQ(e.tx_replay().occupancy(), 16u);
  EXPECT_FALSE(e.replay_active());
  // Admission stays blocked for the whole replay (400400 .. 693600).
  for (ps_t t = 400401; t <= 693600; t += 5000) {
    e.run_before(t);
    ASSERT_TRUE(e.replay_active()) << t;
    ASSERT_EQ(e.tx_replay().next_seq(), 36u) << t;
  }
  ASSERT_EQ(e.run_to_completion(), Status::done);
  ASSERT_EQ(h.recs.size(), 56u);
  for (std::uint64_t k = 0; k < 36; ++k) {
    EXPECT_EQ(h.recs[k].seq, k);
    EXPECT_EQ(h.recs[k].attempt, 1u);
    EXPECT_FALSE(h.recs[k].replay);
    EXPECT_EQ(h.recs[k].start_ps, 13600 * k);
    // queued flits count toward occupancy: 16 except flit 0, sent on admission
    EXPECT_EQ(h.recs[k].occupancy, k == 0 ? 1u : 16u) << k;
  }
  for (std::uint64_t k = 0; k < 16; ++k) {
    const TxRecord& r = h.recs[36 + k];
    EXPECT_EQ(r.seq, 20 + k);
    EXPECT_TRUE(r.replay);
    EXPECT_EQ(r.attempt, 2u);
    EXPECT_EQ(r.start_ps, 489600 + 13600 * k);
  }
  for (std::uint64_t j = 36; j < 40; ++j) {
    const TxRecord& r = h.recs[52 + (j - 36)];
    EXPECT_EQ(r.seq, j);
    EXPECT_EQ(r.attempt, 1u);
    EXPECT_EQ(r.start_ps, 707200 + 13600 * (j - 36));
  }
  // No first transmission of a seq admitted after the request (>= 36) before the last replay.
  for (std::size_t i = 0; i < 52; ++i) EXPECT_LT(h.recs[i].seq, 36u) << i;
  for (std::uint64_t j = 0; j < 40; ++j) {
    const ps_t want = j < 20 ? 13600 * j + 45600 : j < 36 ? 535200 + 13600 * (j - 20) : 752800 + 13600 * (j - 36);
    EXPECT_EQ(e.delivery_time(j), want) << j;
  }
  expect_in_order_exactly_once(e);
  const LinkStats& s = e.stats();
  EXPECT_EQ(s.retransmissions, 16u);
  EXPECT_EQ(s.replay_scheduled, 16u);
  EXPECT_EQ(s.out_of_order_dropped, 15u);  // first attempts of 21..35
  EXPECT_EQ(s.requests_served, 1u);
  EXPECT_EQ(s.requests_ignored, 2u);
  EXPECT_EQ(s.stale_copies, 0u);
  EXPECT_EQ(s.max_occupancy, 16u);
  // Window stall from t = 0 (the 17th arrival) to the request; replay stall
  // from 400400 to 693600 (36..39 admitted when the last copy leaves).
  EXPECT_EQ(s.admission_stall_window_ps, 400400u);
  EXPECT_EQ(s.admission_stall_replay_ps, 693600u - 400400u);
}

// ---------------------------------------------------------------------------
// Re-requests, dedup, retry limit

TEST(LinkEngine, ReRequestWhenReplayedFlitFailsAgain) {
  // Scenario A plus (5, 2) -> 30. The replayed 5 (209600) fails at 255200;
  // request 2 is ready at 305200 on an idle reverse link -> copies arrive
  // 338000, 350800, 363600. The first replay ended at 332000 (serializer busy
  // until 345600): the second replay sends 5..14 at 345600 + 13600 k (14 at
  // 468000); 15 is sent at 481600. Deliveries: 5..14 at 391200 + 13600 (j-5),
  // j >= 15 at 527200 + 13600 (j-15).
  Harness h(clean_config());
  h.script[{5, 1}] = 30;
  h.script[{5, 2}] = 30;
  h.offer_periodic(30, 14000);
  ASSERT_EQ(h.eng->run_to_completion(), Status::done) << h.eng->diagnosis();
  const auto five = h.of_seq(5);
  ASSERT_EQ(five.size(), 3u);
  EXPECT_EQ(five[0]->start_ps, 70000u);
  EXPECT_EQ(five[1]->start_ps, 209600u);
  EXPECT_EQ(five[2]->start_ps, 345600u);
  for (std::uint32_t k = 0; k < 3; ++k) EXPECT_EQ(five[k]->attempt, k + 1);
  EXPECT_EQ(five[2]->magnitude, 0u);
  const auto reps = h.replays();
  ASSERT_EQ(reps.size(), 20u);
  for (std::uint64_t k = 0; k < 20; ++k) {
    EXPECT_EQ(reps[k]->seq, 5 + k % 10);
    EXPECT_EQ(reps[k]->start_ps, (k < 10 ? 209600 : 345600) + 13600 * (k % 10));
  }
  for (std::uint64_t j = 5; j < 30; ++j) {
    const ps_t want = j < 15 ? 391200 + 13600 * (j - 5) : 527200 + 13600 * (j - 15);
    EXPECT_EQ(h.eng->delivery_time(j), want) << j;
  }
  expect_in_order_exactly_once(*h.eng);
  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.requests_generated, 2u);
  EXPECT_EQ(s.request_copies_received, 6u);
  EXPECT_EQ(s.requests_served, 2u);
  EXPECT_EQ(s.requests_ignored, 4u);
  EXPECT_EQ(s.retransmissions, 20u);
  EXPECT_EQ(s.residual_errors, 2u);
  EXPECT_EQ(s.out_of_order_dropped, 18u);  // 6..14 twice
  EXPECT_EQ(s.last_delivery_ps, 527200u + 13600u * 14);
}

TEST(LinkEngine, DedupNoneRestartsOnEveryCopy) {
  // Scenario A with request_dedup none. Copies at 198400, 211200, 224000:
  //   198400 serve -> 5 sent at 209600 (att 2); 211200 serve -> restart at 5;
  //   223200 5 (att 3); 224000 serve -> restart; 236800 5 (att 4);
  //   then 6..14 at 250400 + 13600 (j-6) (14 at 359200); 15 at 372800.
  // 5 decodes at 255200 (delivered), its copies at 268800 and 282400 are
  // duplicates; 6..14 delivered at 296000 + 13600 (j-6).
  LinkConfig c = clean_config();
  c.semantics.request_dedup = LinkSemantics::RequestDedup::none;
  Harness h(c);
  h.script[{5, 1}] = 30;
  h.offer_periodic(30, 14000);
  ASSERT_EQ(h.eng->run_to_completion(), Status::done) << h.eng->diagnosis();
  const auto five = h.of_seq(5);
  ASSERT_EQ(five.size(), 4u);
  EXPECT_EQ(five[1]->start_ps, 209600u);
  EXPECT_EQ(five[2]->start_ps, 223200u);
  EXPECT_EQ(five[3]->start_ps, 236800u);
  const auto reps = h.replays();
  ASSERT_EQ(reps.size(), 12u);
  for (std::uint64_t j = 6; j < 15; ++j) {
    EXPECT_EQ(reps[3 + j - 6]->seq, j);
    EXPECT_EQ(reps[3 + j - 6]->start_ps, 250400 + 13600 * (j - 6));
  }
  EXPECT_EQ(h.of_seq(15)[0]->start_ps, 372800u);
  EXPECT_EQ(h.eng->delivery_time(5), 255200u);
  for (std::uint64_t j = 6; j < 15; ++j) EXPECT_EQ(h.eng->delivery_time(j), 296000 + 13600 * (j - 6)) << j;
  expect_in_order_exactly_once(*h.eng);
  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.request_copies_received, 3u);
  EXPECT_EQ(s.requests_served, 3u);
  EXPECT_EQ(s.requests_ignored, 0u);
  EXPECT_EQ(s.retransmissions, 12u);  // vs 10 under by_request (ScenarioA)
  EXPECT_EQ(s.duplicates_dropped, 2u);
  EXPECT_EQ(s.replay_scheduled, 30u);  // 3 x [5, 15)

  // Same script under by_request, for the direct comparison.
  Harness b(clean_config());
  b.script[{5, 1}] = 30;
  b.offer_periodic(30, 14000);
  ASSERT_EQ(b.eng->run_to_completion(), Status::done);
  EXPECT_EQ(b.eng->stats().retransmissions, 10u);
  EXPECT_GT(s.retransmissions, b.eng->stats().retransmissions);
  EXPECT_EQ(b.of_seq(5).size(), 2u);  // each failure served once
}

TEST(LinkEngine, RequestCopiesAndDedupCountsOverManyFailures) {
  // Failures of 3, 10, 17, 24 (first attempts), sparse enough (period 200 ns)
  // that each is handled before the next: 4 requests, 12 copies, 4 served, 8 ignored.
  Harness h(clean_config());
  for (std::uint64_t s : {3, 10, 17, 24}) h.script[{s, 1}] = 30;
  h.offer_periodic(30, 200000);
  ASSERT_EQ(h.eng->run_to_completion(), Status::done);
  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.requests_generated, 4u);
  EXPECT_EQ(s.request_copies_received, 3 * s.requests_generated);
  EXPECT_EQ(s.requests_served, 4u);
  EXPECT_EQ(s.requests_ignored, 2 * s.requests_served);
  for (std::uint64_t q : {3, 10, 17, 24}) EXPECT_EQ(h.of_seq(q).size(), 2u) << q;
  expect_in_order_exactly_once(*h.eng);
}

TEST(LinkEngine, RetryLimitTakesLinkDown) {
  // retry_limit 5, every attempt of seq 3 has magnitude 30. 10 flits, period 14 ns
  // (all first-sent by 126000). Failure -> next attempt takes 45600 + 82800 =
  // 128400 on an idle reverse link: seq 3 sent at 42000, 170400, 298800,
  // 427200, 555600; the 6th attempt (684000) exceeds the limit.
  LinkConfig c = clean_config();
  c.retry_limit = 5;
  Harness h(c);
  h.every_attempt[3] = 30;
  h.offer_periodic(10, 14000);
  EXPECT_EQ(h.eng->run_to_completion(), Status::link_down);
  EXPECT_EQ(h.eng->status(), Status::link_down);
  const LinkStats& s = h.eng->stats();
  EXPECT_EQ(s.terminal_failures, 1u);
  EXPECT_NE(h.eng->diagnosis().find("flit seq 3 exceeded the retry limit of 5"), std::string::npos)
      << h.eng->diagnosis();
  const auto three = h.of_seq(3);
  ASSERT_EQ(three.size(), 5u);
  const ps_t when[] = {42000, 170400, 298800, 427200, 555600};
  for (std::size_t k = 0; k < 5; ++k) {
    EXPECT_EQ(three[k]->start_ps, when[k]);
    EXPECT_EQ(three[k]->attempt, k + 1);
  }
  EXPECT_EQ(h.eng->now(), 684000u);
  EXPECT_EQ(s.delivered, 3u);  // 0, 1, 2
  EXPECT_EQ(s.requests_generated, 5u);
  EXPECT_EQ(s.requests_served, 5u);
  EXPECT_EQ(h.eng->tx_replay().attempts(3), 5u);
}

// ---------------------------------------------------------------------------
// PREFACE flight cap

/// Polls the engine every `step` ps and checks the contraction invariants.
struct CapObservation {
  bool saw_occupancy_above_cap = false;
};

CapObservation run_preface_burst(TxQueue q) {
  // preface, 60 flits at t = 0, raw errors of magnitude 1 (corrected by LIGHT
  // and STRONG: no failure, no replay) on the first attempts of 20..23. The
  // filter (trained model) sits at q ~ 0.0063 -> LIGHT/16 after 3 clean
  // decodes; the first z = 1 raises the prior to ~0.73 -> STRONG/8 while ~10
  // (recall) or 16 (fifo) entries are retained.
  LinkConfig c = with_queue(clean_config("preface"), q);
  Harness h(c);
  for (std::uint64_t s = 20; s < 24; ++s) h.script[{s, 1}] = 1;
  h.offer_periodic(60, 0);
  auto& e = *h.eng;
  CapObservation out;
  std::uint64_t prev_next = 0, prev_occ = 0, prev_oldest = 0;
  std::uint32_t prev_w = 0;
  for (ps_t t = 1; t < 3000000 && e.delivered() < 60; t += 200) {
    e.run_before(t);
    const std::uint64_t occ = e.tx_replay().occupancy();
    const std::uint32_t w = e.policy().decision().window;
    const std::uint64_t next = e.tx_replay().next_seq();
    EXPECT_LE(e.tx_replay().oldest(), e.delivered()) << "released an undelivered entry at " << t;
    EXPECT_GE(e.tx_replay().oldest(), prev_oldest);
    if (w == 8 && occ > 8) out.saw_occupancy_above_cap = true;
    // Over cap and the window unchanged: nothing may have been admitted since
    // (each ACK frees one entry here, ACKs are >= 12800 ps apart, so the
    // occupancy cannot fall from > W to < W within one 200 ps poll).
    if (prev_w != 0 && prev_occ > prev_w && w == prev_w) {
      EXPECT_EQ(next, prev_next) << "admitted over the cap at " << t;
    }
    prev_next = next;
    prev_occ = occ;
    prev_w = w;
    prev_oldest = e.tx_replay().oldest();
  }
  EXPECT_EQ(e.run_to_completion(), Status::done) << e.diagnosis();
  expect_in_order_exactly_once(e);
  const LinkStats& s = e.stats();
  EXPECT_EQ(s.retransmissions, 0u);
  EXPECT_EQ(s.residual_errors, 0u);
  EXPECT_EQ(s.raw_errors, 4u);
  EXPECT_EQ(s.duplicates_dropped, 0u);
  // Admission always respects the window in force: a first transmission's
  // occupancy (which includes itself) never exceeds the window.
  bool saw_cap = false, saw_light = false;
  for (const auto& r : h.recs) {
    if (r.attempt == 1 && q == TxQueue::recall) {
      EXPECT_LE(r.occupancy, r.window) << "seq " << r.seq;
    }
    saw_cap |= r.window == 8;
    saw_light |= r.profile == kLight;
  }
  EXPECT_TRUE(saw_cap);
  EXPECT_TRUE(saw_light);
  return out;
}

TEST(LinkEngine, PrefaceContractionNeverDropsRetainedEntriesRecall) {
  EXPECT_TRUE(run_preface_burst(TxQueue::recall).saw_occupancy_above_cap);
}

TEST(LinkEngine, PrefaceContractionNeverDropsRetainedEntriesFifo) {
  EXPECT_TRUE(run_preface_burst(TxQueue::fifo).saw_occupancy_above_cap);
}

// ---------------------------------------------------------------------------
// Channel indexing, determinism, paired streams

struct RunResult {
  LinkStats stats;
  std::vector<ps_t> delivery;
  std::vector<TxRecord> recs;
  Status status;
};

RunResult run_default_channel(LinkConfig c, std::uint64_t seed, std::uint64_t n) {
  Harness h(c, seed);
  h.offer_periodic(n, 14000);
  RunResult r;
  r.status = h.eng->run_to_completion();
  r.stats = h.eng->stats();
  for (std::uint64_t i = 0; i < n; ++i) r.delivery.push_back(h.eng->delivery_time(i));
  r.recs = h.recs;
  return r;
}

void expect_same_stats(const LinkStats& a, const LinkStats& b) {
#define SAME(f) EXPECT_EQ(a.f, b.f) << #f
  SAME(offered);
  SAME(admitted);
  SAME(delivered);
  SAME(transmissions);
  SAME(first_transmissions);
  SAME(retransmissions);
  SAME(replay_scheduled);
  SAME(stale_copies);
  SAME(fec_bytes);
  SAME(control_flits);
  SAME(control_bytes);
  SAME(acks_coalesced);
  SAME(first_attempt_errors);
  SAME(raw_errors);
  SAME(residual_errors);
  SAME(duplicates_dropped);
  SAME(out_of_order_dropped);
  SAME(requests_generated);
  SAME(request_copies_received);
  SAME(requests_served);
  SAME(requests_ignored);
  SAME(terminal_failures);
  SAME(profile_switches);
  SAME(profile_transmissions);
  SAME(admission_stall_window_ps);
  SAME(admission_stall_replay_ps);
  SAME(max_occupancy);
  SAME(first_arrival_ps);
  SAME(last_delivery_ps);
#undef SAME
}

TEST(LinkEngine, ChainIndexSemantics) {
  // Default (paper) channel, fixed-strong, seed 101, 3000 flits.
  LinkConfig pf;  // default channel
  pf.policy_name = "fixed-strong";
  LinkConfig pt = pf;
  pt.semantics.chain_index = LinkSemantics::ChainIndex::per_transmission;
  const std::uint64_t seed = 101, n = 3000;
  const RunResult a = run_default_channel(pf, seed, n), a2 = run_default_channel(pf, seed, n);
  const RunResult b = run_default_channel(pt, seed, n), b2 = run_default_channel(pt, seed, n);
  ASSERT_EQ(a.status, Status::done);
  ASSERT_EQ(b.status, Status::done);
  ASSERT_GT(a.stats.retransmissions, 0u);  // replays happen, so the two indexings diverge
  // Deterministic.
  EXPECT_EQ(a.stats.first_attempt_errors, a2.stats.first_attempt_errors);
  EXPECT_EQ(b.stats.first_attempt_errors, b2.stats.first_attempt_errors);
  EXPECT_EQ(a.delivery, a2.delivery);
  EXPECT_EQ(b.delivery, b2.delivery);
  // Different.
  EXPECT_NE(a.stats.first_attempt_errors, b.stats.first_attempt_errors);

  // Definition check against an independent channel instance:
  // per_flit: attempt k of seq s sees draw(s, k-1);
  // per_transmission: the i-th transmission (any seq, any attempt) sees draw(i, 0).
  GilbertElliott ch(pf.channel, seed, 0);
  std::uint64_t first_errs = 0;
  for (std::uint64_t s = 0; s < n; ++s) first_errs += ch.draw(s, 0).magnitude > 0;
  EXPECT_EQ(a.stats.first_attempt_errors, first_errs);
  for (const auto& r : a.recs) {
    ASSERT_GE(r.attempt, 1u);
    ASSERT_EQ(r.magnitude, ch.draw(r.seq, r.attempt - 1).magnitude) << "seq " << r.seq << " attempt " << r.attempt;
  }
  for (std::size_t i = 0; i < b.recs.size(); ++i)
    ASSERT_EQ(b.recs[i].magnitude, ch.draw(i, 0).magnitude) << "transmission " << i;
  // Sanity: first-attempt raw-error fraction of the paper channel ~2.95 %; a
  // 3000-flit single seed is noisy (only ~6 BAD bursts expected), so a loose band.
  EXPECT_GT(a.stats.first_attempt_errors, 0u);
  EXPECT_LT(a.stats.first_attempt_errors, 300u);
}

TEST(LinkEngine, DeterministicAcrossEngines) {
  LinkConfig c;  // default channel, preface
  c.policy_name = "preface";
  const RunResult x = run_default_channel(c, 7, 2000), y = run_default_channel(c, 7, 2000);
  ASSERT_EQ(x.status, Status::done);
  expect_same_stats(x.stats, y.stats);
  EXPECT_EQ(x.delivery, y.delivery);
  ASSERT_EQ(x.recs.size(), y.recs.size());
  for (std::size_t i = 0; i < x.recs.size(); ++i) {
    ASSERT_EQ(x.recs[i].start_ps, y.recs[i].start_ps) << i;
    ASSERT_EQ(x.recs[i].seq, y.recs[i].seq) << i;
    ASSERT_EQ(x.recs[i].magnitude, y.recs[i].magnitude) << i;
    ASSERT_EQ(x.recs[i].profile, y.recs[i].profile) << i;
  }
  // A different seed gives a different run.
  const RunResult z = run_default_channel(c, 8, 2000);
  EXPECT_NE(x.delivery, z.delivery);
}

TEST(LinkEngine, PoliciesSharePairedStreamPerFlit) {
  const std::uint64_t seed = 102, n = 3000;
  LinkConfig base;
  GilbertElliott ch(base.channel, seed, 0);
  std::uint64_t expected = 0;
  for (std::uint64_t s = 0; s < n; ++s) expected += ch.draw(s, 0).magnitude > 0;
  for (const char* p : {"fixed-strong", "post-decode", "predictive-fec", "preface"}) {
    for (TxQueue q : {TxQueue::recall, TxQueue::fifo}) {
      LinkConfig c = with_queue(base, q);
      c.policy_name = p;
      const RunResult r = run_default_channel(c, seed, n);
      ASSERT_EQ(r.status, Status::done) << p;
      EXPECT_EQ(r.stats.first_attempt_errors, expected) << p;
    }
  }
}

// ---------------------------------------------------------------------------
// API misuse

TEST(LinkEngine, OfferBackwardsThrows) {
  auto e = make_engine(clean_config());
  e->offer(1000);
  e->offer(1000);  // equal is fine
  EXPECT_THROW(e->offer(999), std::logic_error);
  e->offer(5000);
  e->run_before(200000);  // engine time advances past 5000
  EXPECT_GT(e->now(), 5000u);
  EXPECT_THROW(e->offer(6000), std::logic_error);  // earlier than the engine's time
}

TEST(LinkEngine, InvalidConfigThrows) {
  LinkConfig c = clean_config();
  c.policy.window_reduced = 20;  // > window_high 16
  EXPECT_THROW(make_engine(c), std::invalid_argument);
  c = clean_config();
  c.request_copies = 0;
  EXPECT_THROW(make_engine(c), std::invalid_argument);
  c = clean_config();
  c.retry_limit = 0;
  EXPECT_THROW(make_engine(c), std::invalid_argument);
  c = clean_config();
  c.policy.window_high = 0;
  EXPECT_THROW(make_engine(c), std::invalid_argument);
  c = clean_config();
  c.forward_rate_bps = 0;
  EXPECT_THROW(make_engine(c), std::invalid_argument);
  c = clean_config();
  EXPECT_THROW(LinkEngine(c, nullptr, 1, 0), std::invalid_argument);
  // W_R == W_H is allowed.
  c.policy.window_reduced = 16;
  EXPECT_NO_THROW(make_engine(c));
}

TEST(LinkEngine, NoOfferIsImmediatelyDone) {
  auto e = make_engine(clean_config());
  EXPECT_EQ(e->run_to_completion(), Status::done);
  EXPECT_EQ(e->delivered(), 0u);
}

}  // namespace

// Lazy quiet events (the fabric core's mode) give exactly the eager engine's
// deliveries and counters on a bursty channel with replays, under both
// transmit-queue semantics.
TEST(LinkEngine, LazyQuietEventsChangeNoResult) {
  for (auto q : {LinkSemantics::TxQueue::fifo, LinkSemantics::TxQueue::recall}) {
    LinkConfig c;
    c.policy.model = c.channel;
    c.semantics.tx_queue = q;
    LinkEngine eager(c, make_policy("preface", c.fec_menu, c.policy), 7, 3);
    LinkEngine lazy(c, make_policy("preface", c.fec_menu, c.policy), 7, 3);
    lazy.set_lazy_quiet_events(true);
    // Bursty offered pattern: 50 flits back to back, then 5 us of silence.
    for (std::uint64_t i = 0; i < 4000; ++i) {
      const ps_t t = (i / 50) * 5000000 + (i % 50) * 14000;
      eager.offer(t);
      lazy.offer(t);
    }
    ASSERT_EQ(eager.run_to_completion(), LinkEngine::Status::done);
    ASSERT_EQ(lazy.run_to_completion(), LinkEngine::Status::done);
    ASSERT_GT(eager.stats().retransmissions, 0u);
    for (std::uint64_t i = 0; i < 4000; ++i) ASSERT_EQ(eager.delivery_time(i), lazy.delivery_time(i)) << i;
    EXPECT_EQ(eager.stats().transmissions, lazy.stats().transmissions);
    EXPECT_EQ(eager.stats().fec_bytes, lazy.stats().fec_bytes);
    EXPECT_EQ(eager.stats().control_bytes, lazy.stats().control_bytes);
    EXPECT_EQ(eager.replayed_flits(), lazy.replayed_flits());
  }
}

// stats() derives several counters (admitted, delivered, transmissions, FEC
// bytes, per-profile residency, control flits) from the engine's state: they
// must equal what an observer of every transmission and delivery counts, for
// a menu held inline and one of more profiles than the inline block.
TEST(LinkEngine, DerivedStatisticsMatchObservedTransmissions) {
  for (const std::size_t profiles : {3u, 6u}) {
    LinkConfig c;
    c.policy.model = c.channel;
    while (c.fec_menu.size() < profiles) {
      auto p = c.fec_menu.back();
      p.overhead += 0.01;
      p.correctable += 2;
      c.fec_menu.push_back(p);
    }
    LinkEngine e(c, make_policy("preface", c.fec_menu, c.policy), 11, 5);
    std::vector<std::uint64_t> per_profile(profiles, 0);
    std::uint64_t observed = 0, first = 0, delivered = 0;
    e.set_tx_observer([&](const TxRecord& r) {
      ++observed;
      ++per_profile.at(r.profile);
      if (r.attempt == 1) ++first;
    });
    e.set_delivery_hook([&](std::uint64_t, ps_t) { ++delivered; });
    for (std::uint64_t i = 0; i < 3000; ++i) e.offer(i * 14000);
    ASSERT_EQ(e.run_to_completion(), Status::done);
    const LinkStats& s = e.stats();
    ASSERT_GT(s.retransmissions, 0u);
    EXPECT_EQ(s.offered, 3000u);
    EXPECT_EQ(s.admitted, 3000u);
    EXPECT_EQ(s.delivered, 3000u);
    EXPECT_EQ(delivered, 3000u);
    EXPECT_EQ(s.transmissions, observed);
    EXPECT_EQ(s.first_transmissions, first);
    EXPECT_EQ(s.first_transmissions + s.retransmissions, s.transmissions);
    ASSERT_EQ(s.profile_transmissions.size(), profiles);
    std::uint64_t fec = 0;
    for (std::size_t k = 0; k < profiles; ++k) {
      EXPECT_EQ(s.profile_transmissions[k], per_profile[k]) << k;
      fec += per_profile[k] * static_cast<std::uint64_t>(c.flit_bytes * c.fec_menu[k].overhead + 0.5);
    }
    EXPECT_EQ(s.fec_bytes, fec);
    // One ACK per delivery plus every copy of every request (no coalescing).
    EXPECT_EQ(s.control_flits, s.delivered + s.requests_generated * c.request_copies);
    EXPECT_EQ(s.control_bytes, s.control_flits * c.control_flit_bytes);
    EXPECT_LE(e.max_waiting(), 3000u);
  }
}

// First serialization starts are kept in a ring over TxReplay's entries (no
// per-flit record): inside the delivery hook each flit's value must equal the
// start of its attempt-1 transmission as the observer saw it, under replays,
// for windows beyond the ring's first size (64) so that it grows, and in both
// transmit-path semantics.
TEST(LinkEngine, FirstTransmissionTimeInDeliveryHook) {
  for (const std::uint32_t window : {16u, 200u})
    for (const TxQueue q : {TxQueue::fifo, TxQueue::recall}) {
      LinkConfig c;
      c.semantics.tx_queue = q;
      c.policy.window_high = window;
      c.policy.window_reduced = std::min<std::uint32_t>(window, 8);
      c.propagation_ps = 1000000;  // 1 us each way: ~150 flits in flight, so occupancy reaches the window
      c.channel.e_good = 0.05;     // frequent errors: replays interleave first transmissions
      c.policy.model = c.channel;
      LinkEngine e(c, make_policy("fixed-strong", c.fec_menu, c.policy), 3, 1);
      e.set_record_first_transmissions(true);
      std::map<std::uint64_t, ps_t> first;  // seq -> start of attempt 1
      e.set_tx_observer([&](const TxRecord& r) {
        if (r.attempt == 1) first.emplace(r.seq, r.start_ps);
      });
      std::uint64_t delivered = 0, checked = 0;
      e.set_delivery_hook([&](std::uint64_t seq, ps_t t) {
        EXPECT_EQ(seq, delivered);
        ++delivered;
        const auto it = first.find(seq);
        ASSERT_NE(it, first.end()) << seq;
        EXPECT_EQ(e.first_transmission_time(seq), it->second) << "window " << window << " seq " << seq;
        EXPECT_LE(it->second, t);
        ++checked;
      });
      // Bursts of back-to-back flits: occupancy reaches the window.
      for (std::uint64_t i = 0; i < 4000; ++i) e.offer((i / 500) * 20000000 + (i % 500) * 1000);
      ASSERT_EQ(e.run_to_completion(), Status::done);
      EXPECT_EQ(checked, 4000u);
      EXPECT_GT(e.stats().retransmissions, 0u);
      EXPECT_GT(e.stats().max_occupancy, window > 64 ? 64u : window - 1);
    }
}
