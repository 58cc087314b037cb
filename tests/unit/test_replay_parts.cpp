// Unit tests for the replay machine's parts: TxReplay (tx_replay.h),
// InOrderReceiver (rx_inorder.h), ControlSerializer (control_serializer.h)
// and wire_time_ps (types.h). link-layer.md §1.
// Expected times are computed by hand in the comments (all in ps).

#include <cstdint>

#include <gtest/gtest.h>

#include "models/link/core/control_serializer.h"
#include "models/link/core/ring_queue.h"
#include "models/link/core/rx_inorder.h"
#include "models/link/core/tx_replay.h"
#include "models/link/core/types.h"

namespace {

using fabricsim::link::ControlFlit;
using fabricsim::link::ControlSerializer;
using fabricsim::link::InOrderReceiver;
using fabricsim::link::kNever;
using fabricsim::link::ps_t;
using fabricsim::link::TxReplay;
using fabricsim::link::wire_time_ps;

// ---------------------------------------------------------------------------
// wire_time_ps

TEST(WireTime, FlitTimesAt400G) {
  // 640 B * 8 = 5120 bit / 4e11 bit/s = 12.8 ns = 12800 ps
  EXPECT_EQ(wire_time_ps(640, 400e9), 12800u);
  // STRONG: 640 * 1.0625 = 680 B = 5440 bit -> 13.6 ns
  EXPECT_EQ(wire_time_ps(640 * 1.0625, 400e9), 13600u);
  // LIGHT: 640 * 1.025 = 656 B = 5248 bit -> 13.12 ns
  EXPECT_EQ(wire_time_ps(640 * 1.025, 400e9), 13120u);
  // LOW: 640 * 1.0 = 12800
  EXPECT_EQ(wire_time_ps(640 * 1.0, 400e9), 12800u);
  // 1 B at 400 Gb/s = 20 ps; 1 B at 3e12 b/s = 2.667 ps -> rounds to 3;
  // 1 B at 6e12 b/s = 1.333 ps -> rounds to 1
  EXPECT_EQ(wire_time_ps(1, 400e9), 20u);
  EXPECT_EQ(wire_time_ps(1, 3e12), 3u);
  EXPECT_EQ(wire_time_ps(1, 6e12), 1u);
}

// ---------------------------------------------------------------------------
// TxReplay

TEST(TxReplay, AdmitAssignsConsecutiveSequenceNumbers) {
  TxReplay tx(20);
  EXPECT_EQ(tx.occupancy(), 0u);
  EXPECT_EQ(tx.oldest(), 0u);
  EXPECT_EQ(tx.next_seq(), 0u);
  for (std::uint64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(tx.admit(), i);
    EXPECT_EQ(tx.occupancy(), i + 1);
  }
  EXPECT_EQ(tx.next_seq(), 10u);
  EXPECT_EQ(tx.oldest(), 0u);
  EXPECT_TRUE(tx.retained(0));
  EXPECT_TRUE(tx.retained(9));
  EXPECT_FALSE(tx.retained(10));
  EXPECT_EQ(tx.retry_limit(), 20u);
}

TEST(TxReplay, ReleaseIsCumulativeOnly) {
  TxReplay tx(20);
  for (int i = 0; i < 10; ++i) tx.admit();  // [0, 10)
  // ACK 4: releases 0..3 (4 entries), occupancy 6.
  EXPECT_EQ(tx.release_through(4), 4u);
  EXPECT_EQ(tx.oldest(), 4u);
  EXPECT_EQ(tx.occupancy(), 6u);
  EXPECT_FALSE(tx.retained(3));
  EXPECT_TRUE(tx.retained(4));
  // Stale ACKs (<= oldest) release nothing.
  EXPECT_EQ(tx.release_through(4), 0u);
  EXPECT_EQ(tx.release_through(2), 0u);
  EXPECT_EQ(tx.release_through(0), 0u);
  EXPECT_EQ(tx.oldest(), 4u);
  EXPECT_EQ(tx.occupancy(), 6u);
  // ACK 7 releases exactly 4, 5, 6.
  EXPECT_EQ(tx.release_through(7), 3u);
  EXPECT_EQ(tx.occupancy(), 3u);
  // Over-range ACK 100 is clamped to next_seq 10: releases 7, 8, 9.
  EXPECT_EQ(tx.release_through(100), 3u);
  EXPECT_EQ(tx.oldest(), 10u);
  EXPECT_EQ(tx.next_seq(), 10u);
  EXPECT_EQ(tx.occupancy(), 0u);
  // Admission continues from 10, not from a reused number.
  EXPECT_EQ(tx.admit(), 10u);
  EXPECT_EQ(tx.occupancy(), 1u);
  // An over-range ACK on an empty-then-one buffer never moves oldest past next.
  EXPECT_EQ(tx.release_through(1000), 1u);
  EXPECT_EQ(tx.oldest(), 11u);
  EXPECT_EQ(tx.next_seq(), 11u);
}

TEST(TxReplay, RecordAttemptCountsToLimitThenExceeds) {
  TxReplay tx(5);
  for (int i = 0; i < 3; ++i) tx.admit();  // [0, 3)
  for (std::uint32_t k = 1; k <= 5; ++k) {
    EXPECT_EQ(tx.record_attempt(1), k);
    EXPECT_EQ(tx.attempts(1), k);
  }
  // 6th transmission would exceed 5: terminal, not recorded.
  EXPECT_EQ(tx.record_attempt(1), TxReplay::kRetryExceeded);
  EXPECT_EQ(tx.record_attempt(1), TxReplay::kRetryExceeded);
  EXPECT_EQ(tx.attempts(1), 5u);
  // Other entries are independent.
  EXPECT_EQ(tx.attempts(0), 0u);
  EXPECT_EQ(tx.record_attempt(0), 1u);
  EXPECT_EQ(tx.record_attempt(2), 1u);
  EXPECT_EQ(tx.record_attempt(2), 2u);
  // A released seq returns 0 (stale copy) and reports 0 attempts.
  tx.release_through(1);
  EXPECT_EQ(tx.record_attempt(0), 0u);
  EXPECT_EQ(tx.attempts(0), 0u);
  // A seq never admitted is not retained either.
  EXPECT_EQ(tx.record_attempt(3), 0u);
  EXPECT_EQ(tx.attempts(3), 0u);
  // A replay request is not an ACK: nothing but release_through frees entries.
  EXPECT_EQ(tx.occupancy(), 2u);
  EXPECT_EQ(tx.attempts(1), 5u);
  EXPECT_EQ(tx.attempts(2), 2u);
}

TEST(TxReplay, RetryLimitOne) {
  TxReplay tx(1);
  tx.admit();
  EXPECT_EQ(tx.record_attempt(0), 1u);
  EXPECT_EQ(tx.record_attempt(0), TxReplay::kRetryExceeded);
}

TEST(TxReplay, AttemptCountersSurviveGrowthAndWrap) {
  // 100 retained entries (more than any small initial buffer), entry s gets
  // (s % 7) + 1 attempts; then release 90, admit 300 more (the storage wraps
  // around many times); old survivors keep their counts, new entries start at 0.
  TxReplay tx(20);
  for (int i = 0; i < 100; ++i) tx.admit();
  for (std::uint64_t s = 0; s < 100; ++s)
    for (std::uint64_t k = 0; k <= s % 7; ++k) tx.record_attempt(s);
  for (std::uint64_t s = 0; s < 100; ++s) ASSERT_EQ(tx.attempts(s), s % 7 + 1) << s;
  EXPECT_EQ(tx.release_through(90), 90u);
  for (std::uint64_t s = 90; s < 100; ++s) ASSERT_EQ(tx.attempts(s), s % 7 + 1) << s;
  for (int round = 0; round < 30; ++round) {
    for (int i = 0; i < 10; ++i) tx.admit();
    tx.release_through(tx.oldest() + 10);
  }
  // Now [390, 400): all admitted in the last round, never transmitted.
  EXPECT_EQ(tx.oldest(), 390u);
  EXPECT_EQ(tx.next_seq(), 400u);
  for (std::uint64_t s = 390; s < 400; ++s) ASSERT_EQ(tx.attempts(s), 0u) << s;
  // Grow again with entries spanning the wrap point, counts preserved.
  for (std::uint64_t s = 390; s < 400; ++s) tx.record_attempt(s);
  for (int i = 0; i < 200; ++i) tx.admit();  // [390, 600)
  EXPECT_EQ(tx.occupancy(), 210u);
  for (std::uint64_t s = 390; s < 400; ++s) ASSERT_EQ(tx.attempts(s), 1u) << s;
  for (std::uint64_t s = 400; s < 600; ++s) ASSERT_EQ(tx.attempts(s), 0u) << s;
  EXPECT_EQ(tx.record_attempt(599), 1u);
  EXPECT_EQ(tx.record_attempt(390), 2u);
}

// ---------------------------------------------------------------------------
// InOrderReceiver

TEST(InOrderReceiver, Verdicts) {
  using V = InOrderReceiver::Verdict;
  InOrderReceiver rx;
  EXPECT_EQ(rx.expected(), 0u);
  EXPECT_EQ(rx.receive(0, true), V::deliver);
  EXPECT_EQ(rx.expected(), 1u);
  EXPECT_EQ(rx.receive(1, false), V::failed);  // uncorrectable: dropped, expected stays
  EXPECT_EQ(rx.expected(), 1u);
  EXPECT_EQ(rx.receive(2, true), V::out_of_order);  // a hole (1) precedes it
  EXPECT_EQ(rx.receive(3, true), V::out_of_order);
  EXPECT_EQ(rx.expected(), 1u);
  EXPECT_EQ(rx.receive(0, true), V::duplicate);
  EXPECT_EQ(rx.receive(0, false), V::failed);  // a failed decode is 'failed' whatever its seq
  EXPECT_EQ(rx.receive(5, false), V::failed);
  EXPECT_EQ(rx.expected(), 1u);
  EXPECT_EQ(rx.receive(1, true), V::deliver);  // the replayed hole
  EXPECT_EQ(rx.receive(2, true), V::deliver);
  EXPECT_EQ(rx.receive(3, true), V::deliver);
  EXPECT_EQ(rx.expected(), 4u);  // cumulative ACK value
  EXPECT_EQ(rx.receive(3, true), V::duplicate);
  EXPECT_EQ(rx.receive(1, true), V::duplicate);
}

// ---------------------------------------------------------------------------
// ControlSerializer: base 50 ns, 640 B at 400 Gb/s = 12.8 ns, propagation 20 ns.

constexpr ps_t kBase = 50000, kProp = 20000;
const ps_t kSer = wire_time_ps(640, 400e9);  // 12800

TEST(ControlSerializer, SingleAckTiming) {
  ASSERT_EQ(kSer, 12800u);
  ControlSerializer c(kBase, kSer, kProp, false);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.next_arrival(), kNever);
  c.send_ack(0, 7);
  // ready 0 + 50000; serialize 50000..62800; arrive 62800 + 20000 = 82800
  EXPECT_EQ(c.next_arrival(), 82800u);
  EXPECT_EQ(c.in_flight(), 1u);
  const ControlFlit f = c.pop();
  EXPECT_EQ(f.kind, ControlFlit::Kind::ack);
  EXPECT_EQ(f.seq, 7u);
  EXPECT_EQ(f.request_id, 0u);
  EXPECT_EQ(f.start, 50000u);
  EXPECT_EQ(f.arrival, 82800u);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.flits_sent(), 1u);
  // A later ACK on an idle link: generated at 1 000 000 -> arrives 1 082 800.
  c.send_ack(1000000, 8);
  EXPECT_EQ(c.next_arrival(), 1082800u);
}

// Serializers share one copy of each distinct set of constants: serializers
// of different constants, alive at once, each keep their own timing.
TEST(ControlSerializer, DifferentConstantsAliveAtOnce) {
  ControlSerializer a(kBase, kSer, kProp, false), b(0, kSer, kProp, false), c(kBase, 2 * kSer, kProp, false),
      d(kBase, kSer, 0, false), e(kBase, kSer, kProp, true);
  for (ControlSerializer* s : {&a, &b, &c, &d, &e}) s->send_ack(0, 1);
  e.send_ack(0, 2);  // waits behind ACK 1 (starts at 62800)
  e.send_ack(0, 3);  // coalesced into ACK 2, which has not started serializing
  EXPECT_EQ(a.next_arrival(), 82800u);
  EXPECT_EQ(b.next_arrival(), 32800u);
  EXPECT_EQ(c.next_arrival(), 95600u);
  EXPECT_EQ(d.next_arrival(), 62800u);
  EXPECT_EQ(e.in_flight(), 2u);
  EXPECT_EQ(e.acks_coalesced(), 1u);
  EXPECT_EQ(e.pop().seq, 1u);
  EXPECT_EQ(e.pop().seq, 3u);
}

TEST(ControlSerializer, ThreeRequestCopiesBackToBack) {
  ControlSerializer c(kBase, kSer, kProp, false);
  c.send_request(0, 5, 1, 3);
  // starts 50000, 62800, 75600 -> arrivals 82800, 95600, 108400
  const ps_t start[] = {50000, 62800, 75600};
  const ps_t arr[] = {82800, 95600, 108400};
  EXPECT_EQ(c.in_flight(), 3u);
  EXPECT_EQ(c.flits_sent(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.next_arrival(), arr[i]);
    const ControlFlit f = c.pop();
    EXPECT_EQ(f.kind, ControlFlit::Kind::replay_request);
    EXPECT_EQ(f.seq, 5u);
    EXPECT_EQ(f.request_id, 1u);
    EXPECT_EQ(f.start, start[i]);
    EXPECT_EQ(f.arrival, arr[i]);
  }
  EXPECT_TRUE(c.empty());
}

TEST(ControlSerializer, SecondAckQueuesBehindFirst) {
  ControlSerializer c(kBase, kSer, kProp, false);
  c.send_ack(0, 1);      // serializes 50000..62800, arrives 82800
  c.send_ack(10000, 2);  // ready 60000 < 62800: waits, 62800..75600, arrives 95600
  c.send_ack(30000, 3);  // ready 80000 > 75600: idle gap, 80000..92800, arrives 112800
  ControlFlit f = c.pop();
  EXPECT_EQ(f.seq, 1u);
  EXPECT_EQ(f.arrival, 82800u);
  f = c.pop();
  EXPECT_EQ(f.seq, 2u);
  EXPECT_EQ(f.start, 62800u);
  EXPECT_EQ(f.arrival, 95600u);
  f = c.pop();
  EXPECT_EQ(f.seq, 3u);
  EXPECT_EQ(f.start, 80000u);
  EXPECT_EQ(f.arrival, 112800u);
}

TEST(ControlSerializer, AckBehindRequestCopiesFifo) {
  ControlSerializer c(kBase, kSer, kProp, false);
  c.send_request(0, 4, 9, 3);  // copies occupy 50000..88400
  c.send_ack(1000, 5);         // ready 51000, waits until 88400 -> arrives 88400+12800+20000 = 121200
  const ps_t arr[] = {82800, 95600, 108400, 121200};
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c.next_arrival(), arr[i]);
    const ControlFlit f = c.pop();
    EXPECT_EQ(f.kind, i < 3 ? ControlFlit::Kind::replay_request : ControlFlit::Kind::ack);
  }
}

TEST(ControlSerializer, CoalescingMergesIntoQueuedNotStartedAck) {
  // Request copies keep the link busy 50000..88400. ACK(5) generated at 1000
  // is ready at 51000 but starts only at 88400; ACK(7) generated at 2000
  // (ready 52000 < 88400) finds it queued and not started.
  ControlSerializer on(kBase, kSer, kProp, true);
  on.send_request(0, 4, 1, 3);
  on.send_ack(1000, 5);
  on.send_ack(2000, 7);
  EXPECT_EQ(on.acks_coalesced(), 1u);
  EXPECT_EQ(on.in_flight(), 4u);
  EXPECT_EQ(on.flits_sent(), 4u);
  for (int i = 0; i < 3; ++i) on.pop();
  ControlFlit f = on.pop();
  EXPECT_EQ(f.kind, ControlFlit::Kind::ack);
  EXPECT_EQ(f.seq, 7u);  // the merged ACK carries the newer cumulative value
  EXPECT_EQ(f.start, 88400u);
  EXPECT_EQ(f.arrival, 121200u);
  EXPECT_TRUE(on.empty());

  // Same sequence without coalescing: two ACKs, the second at 121200 + 12800 = 134000.
  ControlSerializer off(kBase, kSer, kProp, false);
  off.send_request(0, 4, 1, 3);
  off.send_ack(1000, 5);
  off.send_ack(2000, 7);
  EXPECT_EQ(off.acks_coalesced(), 0u);
  EXPECT_EQ(off.in_flight(), 5u);
  EXPECT_EQ(off.flits_sent(), 5u);
  for (int i = 0; i < 3; ++i) off.pop();
  f = off.pop();
  EXPECT_EQ(f.seq, 5u);
  EXPECT_EQ(f.arrival, 121200u);
  f = off.pop();
  EXPECT_EQ(f.seq, 7u);
  EXPECT_EQ(f.start, 101200u);
  EXPECT_EQ(f.arrival, 134000u);
}

TEST(ControlSerializer, CoalescingNeverMergesIntoStartedAckOrRequest) {
  ControlSerializer c(kBase, kSer, kProp, true);
  // ACK(1) at 0 starts at 50000. ACK(2) at 5000 is ready at 55000 > 50000:
  // the first has started, so no merge: 62800..75600, arrives 95600.
  c.send_ack(0, 1);
  c.send_ack(5000, 2);
  EXPECT_EQ(c.acks_coalesced(), 0u);
  EXPECT_EQ(c.in_flight(), 2u);
  // Exactly at the boundary: ACK(3) generated at 12800 is ready at 62800 ==
  // start of ACK(2): it has started (start > ready is false) -> no merge.
  c.send_ack(12800, 3);
  EXPECT_EQ(c.acks_coalesced(), 0u);
  EXPECT_EQ(c.in_flight(), 3u);
  // Behind a queued request copy an ACK is never merged into the request.
  ControlSerializer r(kBase, kSer, kProp, true);
  r.send_ack(0, 1);              // 50000..62800
  r.send_request(100, 1, 1, 1);  // ready 50100, waits: 62800..75600
  r.send_ack(200, 3);            // back() is a request: queued, 75600..88400
  EXPECT_EQ(r.acks_coalesced(), 0u);
  EXPECT_EQ(r.in_flight(), 3u);
  r.pop();
  EXPECT_EQ(r.pop().kind, ControlFlit::Kind::replay_request);
  const ControlFlit f = r.pop();
  EXPECT_EQ(f.seq, 3u);
  EXPECT_EQ(f.arrival, 108400u);
}

TEST(ControlSerializer, CoalescedRunOfAcksKeepsOneSlot) {
  // Behind one 3-copy request (busy until 88400) five ACKs generated at
  // 1000..5000 (all ready before 88400) collapse into the first: 1 ACK flit.
  ControlSerializer c(kBase, kSer, kProp, true);
  c.send_request(0, 0, 1, 3);
  for (std::uint64_t i = 1; i <= 5; ++i) c.send_ack(i * 1000, 10 + i);
  EXPECT_EQ(c.acks_coalesced(), 4u);
  EXPECT_EQ(c.in_flight(), 4u);
  for (int i = 0; i < 3; ++i) c.pop();
  const ControlFlit f = c.pop();
  EXPECT_EQ(f.seq, 15u);
  EXPECT_EQ(f.arrival, 121200u);
}

}  // namespace

// RingQueue: FIFO order across growth and wrap-around; copies are deep and
// keep the order; a moved-from queue is empty and reusable.
TEST(RingQueue, OrderAcrossGrowthWrapCopyAndMove) {
  fabricsim::link::RingQueue<std::uint64_t> q;
  std::uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {  // grows 16 -> 32 -> 64 while the head wraps
    for (int i = 0; i < 7; ++i) q.push_back(next_in++);
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(q.front(), next_out++);
      q.pop_front();
    }
  }
  ASSERT_EQ(q.size(), next_in - next_out);
  EXPECT_EQ(q.back(), next_in - 1);
  fabricsim::link::RingQueue<std::uint64_t> copy(q);
  q.pop_front();  // the copy does not share storage
  ASSERT_EQ(copy.size(), q.size() + 1);
  for (std::size_t i = 0; i < copy.size(); ++i) ASSERT_EQ(copy.at(i), next_out + i);
  fabricsim::link::RingQueue<std::uint64_t> moved(std::move(copy));
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_EQ(moved.front(), next_out);
  copy.push_back(42);
  EXPECT_EQ(copy.front(), 42u);
  copy = moved;
  EXPECT_EQ(copy.size(), moved.size());
  EXPECT_EQ(copy.back(), next_in - 1);
}

// InlineRingQueue: FIFO order while inline, across the spill to the heap
// buffer (and its growth) and back to the inline slots once empty; the
// inline slots hold the head of a short queue (the address is inside the
// object); copies and moves keep the order in either state.
TEST(InlineRingQueue, OrderAcrossSpillReturnCopyAndMove) {
  using Q = fabricsim::link::InlineRingQueue<std::uint64_t, 4>;
  Q q;
  const auto inside = [](const Q& x) {
    const char* a = reinterpret_cast<const char*>(x.head_address());
    const char* o = reinterpret_cast<const char*>(&x);
    return a >= o && a < o + sizeof(Q);
  };
  std::uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 30; ++round) {  // wraps inside the 4 slots
    for (int i = 0; i < 3; ++i) q.push_back(next_in++);
    ASSERT_TRUE(q.is_inline());
    ASSERT_TRUE(inside(q));
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(q.front(), next_out++);
      q.pop_front();
    }
  }
  for (int i = 0; i < 40; ++i) q.push_back(next_in++);  // spills: 8, 16, 32, 64
  EXPECT_FALSE(q.is_inline());
  EXPECT_FALSE(inside(q));
  ASSERT_EQ(q.size(), 40u);
  EXPECT_EQ(q.back(), next_in - 1);
  for (std::size_t i = 0; i < q.size(); ++i) ASSERT_EQ(q.at(i), next_out + i);
  Q copy(q);
  ASSERT_EQ(copy.size(), 40u);
  for (std::size_t i = 0; i < copy.size(); ++i) ASSERT_EQ(copy.at(i), next_out + i);
  while (!q.empty()) {
    ASSERT_EQ(q.front(), next_out++);
    q.pop_front();
  }
  EXPECT_TRUE(q.is_inline());  // empty: back inline
  for (int i = 0; i < 9; ++i) q.push_back(next_in++);  // spills again into the kept buffer
  EXPECT_FALSE(q.is_inline());
  for (int i = 0; i < 9; ++i) {
    ASSERT_EQ(q.front(), next_out++);
    q.pop_front();
  }
  q.push_back(7);
  q.push_back(8);
  Q moved(std::move(q));  // inline state: the elements move into the new object
  EXPECT_TRUE(q.empty());  // NOLINT(bugprone-use-after-move): documented state
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_TRUE(inside(moved));
  EXPECT_EQ(moved.front(), 7u);
  EXPECT_EQ(moved.back(), 8u);
  Q moved2(std::move(copy));  // spilled state
  ASSERT_EQ(moved2.size(), 40u);
  EXPECT_EQ(moved2.front(), 90u);  // 30 rounds of 3 before the copy
  q = moved2;
  ASSERT_EQ(q.size(), 40u);
  EXPECT_EQ(q.at(39), moved2.at(39));
  Q r;
  r.reserve(16);  // allocates the spill buffer, stays inline
  EXPECT_TRUE(r.is_inline());
  for (int i = 0; i < 16; ++i) r.push_back(static_cast<std::uint64_t>(i));
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(r.front(), static_cast<std::uint64_t>(i));
    r.pop_front();
  }
}

// emplace_back builds an aggregate in its slot: the same FIFO order and
// fields as push_back, inline, across the spill and the growth, in both queues.
TEST(InlineRingQueue, EmplaceBackBuildsAggregatesInOrderAcrossTheSpill) {
  struct Item {
    std::uint64_t seq;
    bool replay;
    std::int16_t profile;
  };
  fabricsim::link::InlineRingQueue<Item, 2> q;
  fabricsim::link::RingQueue<Item> r;
  for (std::uint64_t i = 0; i < 37; ++i) {
    q.emplace_back(i, i % 3 == 0, static_cast<std::int16_t>(i % 5 - 1));
    r.emplace_back(i, i % 3 == 0, static_cast<std::int16_t>(i % 5 - 1));
    if (i == 1) {
      EXPECT_TRUE(q.is_inline());
    }
  }
  EXPECT_FALSE(q.is_inline());
  ASSERT_EQ(q.size(), 37u);
  ASSERT_EQ(r.size(), 37u);
  for (std::uint64_t i = 0; i < 37; ++i) {
    ASSERT_EQ(q.front().seq, i);
    EXPECT_EQ(q.front().replay, i % 3 == 0);
    EXPECT_EQ(q.front().profile, static_cast<std::int16_t>(i % 5 - 1));
    ASSERT_EQ(r.front().seq, i);
    EXPECT_EQ(r.front().profile, static_cast<std::int16_t>(i % 5 - 1));
    q.pop_front();
    r.pop_front();
  }
  EXPECT_TRUE(q.is_inline());
  q.emplace_back(std::uint64_t{99}, true, std::int16_t{-1});
  EXPECT_TRUE(q.is_inline());
  EXPECT_EQ(q.back().seq, 99u);
}
