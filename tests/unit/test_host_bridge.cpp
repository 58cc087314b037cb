// Host bridge component alone (models/pcie/core/host_bridge): the posted-write
// ordering point (drains, head of line) and the fan-out detector, driven by
// hand on hand-made routes: no engine, no SystemC.
#include <gtest/gtest.h>

#include <sstream>

#include "models/common/stats_source.h"
#include "models/pcie/core/host_bridge.h"

using namespace fabricsim;
using namespace fabricsim::pcie;

namespace {

constexpr ps_t kLat = 100'000;  // 100 ns per hop

// An ordering point with two routes out of it (toward quadrants 1 and 2), each
// two hops of 1 ps/B and 100 ns: hop 0 is the bridge's port into the NBIO,
// hop 1 ends at the destination host bridge (the acceptance).
struct Bench {
  explicit Bench(WriteOrderingParams w = ordering()) : hb("hb00", HostBridgeParams{0, w}, 7, q, tt) {
    for (auto* r : {&to1, &to2}) {
      r->order_idx = 0;
      r->accept_idx = 1;
      r->order_to_accept_ps = 2 * kLat;  // as PcieRouter computes it
    }
    to1.hops = {&a1, &b1};
    to1.dest_key = 1;
    to2.hops = {&a2, &b2};
    to2.dest_key = 2;
    for (auto* l : {&a1, &b1, &a2, &b2}) {
      l->ps_per_byte = 1.0;
      l->latency_ps = kLat;
    }
    src = hb.add_source(0, "gpu0");
  }
  static WriteOrderingParams ordering() {
    WriteOrderingParams w;
    w.ack_latency_ps = 500'000;  // 500 ns
    return w;
  }
  // A write transfer whose bytes are all injected, with one burst held.
  std::uint32_t transfer() {
    const auto id = tt.create();
    tt[id].left = 0;
    tt[id].unresolved = 1;
    tt[id].cookie = id;
    return id;
  }
  HeldBurst burst(const PcieRoute& r, std::uint64_t bytes, ps_t at) {
    return HeldBurst{transfer(), bytes, at, at + bytes, r.dest_key, &r};
  }
  // Deliver events until the queue is empty; returns completion (transfer -> time).
  std::vector<std::pair<std::size_t, ps_t>> drain() {
    std::vector<std::pair<std::size_t, ps_t>> done;
    while (!q.empty()) {
      ps_t t;
      PcieEvent e;
      std::size_t id;
      q.pop(t, e, id);
      if (e == PcieEvent::release) {
        EXPECT_EQ(id, 0u);  // the source's endpoint index
        hb.on_release(src, t);
      } else if (e == PcieEvent::complete) {
        done.emplace_back(id, t);
      }
    }
    return done;
  }
  PcieEventQueue q;
  PcieTransferTable tt;
  HostBridge hb;
  PcieLinkDir a1, b1, a2, b2;
  PcieRoute to1, to2;
  int src = -1;
};

}  // namespace

TEST(HostBridge, BurstsToOneDestinationPassTheOrderingPointAtOnce) {
  Bench b;
  b.hb.admit(b.src, b.burst(b.to1, 4096, 0));
  b.hb.admit(b.src, b.burst(b.to1, 4096, 4096));
  EXPECT_EQ(b.hb.held(b.src), 0u);
  const auto done = b.drain();
  ASSERT_EQ(done.size(), 2u);
  // Cut-through over two hops: the first tail at 4096 + 2 x 100 ns, the second right behind it.
  EXPECT_EQ(done[0].second, 4096u + 2 * kLat);
  EXPECT_EQ(done[1].second, 8192u + 2 * kLat);
  EXPECT_EQ(b.hb.stats().ordered_bursts, 2u);
  EXPECT_EQ(b.hb.stats().drains, 0u);
  EXPECT_EQ(b.hb.stats().drain_wait_ps, 0u);
}

TEST(HostBridge, ADestinationChangeWaitsForTheDrainOfEarlierWrites) {
  Bench b;
  b.hb.admit(b.src, b.burst(b.to1, 4096, 0));
  // The first burst's acceptance: end of hop 1 = 4096 + 100 ns; its ack 500 ns later.
  const ps_t ack = 4096 + kLat + 500'000;
  b.hb.admit(b.src, b.burst(b.to2, 4096, 1000));
  EXPECT_EQ(b.hb.held(b.src), 1u);
  const auto done = b.drain();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(b.hb.stats().drains, 1u);
  EXPECT_EQ(b.hb.stats().drain_wait_ps, ack - 1000);
  // Released at the ack: its tail (held since 1000 + 4096) leaves at ack + 4096, two hops.
  EXPECT_EQ(done[1].second, ack + 4096 + 2 * kLat);
}

TEST(HostBridge, LaterBurstsQueueBehindAHeldOneHeadOfLine) {
  Bench b;
  b.hb.admit(b.src, b.burst(b.to1, 4096, 0));
  b.hb.admit(b.src, b.burst(b.to2, 4096, 1000));  // waits for the drain
  b.hb.admit(b.src, b.burst(b.to2, 64, 2000));    // same destination, but behind it
  EXPECT_EQ(b.hb.held(b.src), 2u);
  std::ostringstream os;
  b.hb.dump_state(os);
  EXPECT_NE(os.str().find("ordering point of gpu0: 2 write burst(s) held"), std::string::npos) << os.str();
  const auto done = b.drain();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(b.hb.held(), 0u);
  EXPECT_EQ(b.hb.stats().drains, 1u);  // the third follows its predecessor's destination
  EXPECT_GT(done[2].second, done[1].second);
}

TEST(HostBridge, OrderingPointsOfDifferentSourcesAreIndependent) {
  Bench b;
  const int other = b.hb.add_source(1, "gpu1");
  b.hb.admit(b.src, b.burst(b.to1, 4096, 0));
  b.hb.admit(other, b.burst(b.to2, 4096, 1000));  // another source: no drain
  EXPECT_EQ(b.hb.held(), 0u);
  EXPECT_EQ(b.hb.stats().drains, 0u);
}

TEST(HostBridge, FanOutDetectorCountsQueuedAndRecentDestinations) {
  FanoutDetector d(1'000'000);  // 1 us
  link::RingQueue<HeldBurst> queue;
  EXPECT_EQ(d.active(queue, 0), 0);
  d.released(1, 0);
  d.released(2, 500'000);
  d.released(1, 600'000);
  EXPECT_EQ(d.active(queue, 700'000), 2);
  EXPECT_EQ(d.active(queue, 1'550'000), 1);  // destination 2 left the window; 1 was refreshed at 600 ns
  HeldBurst h;
  h.dest_key = 3;
  queue.push_back(h);
  EXPECT_EQ(d.active(queue, 1'550'000), 2);
  EXPECT_EQ(d.active(queue, 5'000'000), 1);  // only the queued one
}

TEST(HostBridge, FanOutHoldsEachDestinationChangeInsideABurstForARoundTrip) {
  auto w = Bench::ordering();
  w.interleave_bytes = 1024;  // 64 pieces per 64 KiB burst
  // One destination: no change inside bursts.
  Bench one(w);
  one.hb.admit(one.src, one.burst(one.to1, 65536, 0));
  one.drain();
  EXPECT_EQ(one.hb.stats().interleaved_switches, 0u);
  // Two destinations active: every piece but the first changes with probability 1/2.
  Bench two(w);
  two.hb.admit(two.src, two.burst(two.to1, 4096, 0));
  two.drain();
  // At 900 ns the first write's ack (at 604 ns) is back: no drain, but destination 1
  // was released 900 ns ago, inside the 1 us window: two destinations are active.
  two.hb.admit(two.src, two.burst(two.to2, 65536, 900'000));
  EXPECT_EQ(two.hb.active_destinations(two.src, 900'000), 2);
  const auto done = two.drain();
  ASSERT_EQ(done.size(), 1u);
  const auto sw = two.hb.stats().interleaved_switches;
  EXPECT_GT(sw, 15u);  // 63 draws of probability 1/2
  EXPECT_LT(sw, 48u);
  EXPECT_EQ(two.hb.stats().drains, 0u);
  // Each change holds the burst one round trip (ordering point -> destination host
  // bridge: 2 hops, plus the ack); then its tail crosses both hops.
  const ps_t rtt = 2 * kLat + 500'000;
  EXPECT_EQ(done[0].second, 900'000 + sw * rtt + 65536 + 2 * kLat);
  EXPECT_EQ(common::find_stat(two.hb, "interleaved_switches"), sw);
}

TEST(HostBridge, PublishesItsStatisticsByName) {
  Bench b;
  b.a1.ps_per_byte = 2.0;
  b.hb.admit(b.src, b.burst(b.to1, 100, 0));
  b.drain();
  const auto all = common::collect_stats(b.hb);
  ASSERT_GE(all.size(), 4u);
  EXPECT_EQ(all[0].first, "ordered_bursts");
  EXPECT_EQ(all[0].second, 1u);
  EXPECT_EQ(common::find_stat(b.hb, "drains"), 0u);
  EXPECT_FALSE(common::find_stat(b.hb, "no_such_statistic").has_value());
}
