// PCIe host timing core (models/pcie/core/pcie_engine): cut-through timing,
// mechanism A (read-stall windows) and mechanism B (posted-write ordering).
#include <gtest/gtest.h>

#include "models/pcie/core/pcie_engine.h"

using namespace fabricsim;
using pcie::PcieEngine;
using pcie::PcieNode;
using K = PcieNode::Kind;
using fabric_core::TransferKind;

namespace {

// Two quadrants, one host bridge and one partition each; GPUs 0,1 in
// quadrant 0's partition, GPU 2 in quadrant 1; host memory is rank 3.
// Every edge: 1 ps per byte (1 TB/s), 100 ns latency.
std::vector<PcieNode> tiny(int quadrants = 2) {
  const double b = 1.0;
  const link::ps_t l = 100'000;
  std::vector<PcieNode> n{{"df", K::data_fabric, -1, -1, -1, 0, 0, 0, 0}};
  for (int q = 0; q < quadrants; ++q) n.push_back({"q" + std::to_string(q), K::quadrant, 0, -1, q, b, b, l, l});
  for (int q = 0; q < quadrants; ++q) n.push_back({"hb" + std::to_string(q), K::host_bridge, 1 + q, -1, q, b, b, l, l});
  for (int q = 0; q < quadrants; ++q)
    n.push_back({"p" + std::to_string(q), K::partition, 1 + quadrants + q, -1, q, b, b, l, l});
  const int p0 = 1 + 2 * quadrants;
  n.push_back({"gpu0", K::endpoint, p0, 0, 0, b, b, l, 0});
  n.push_back({"gpu1", K::endpoint, p0, 1, 0, b, b, l, 0});
  for (int q = 1; q < quadrants; ++q)
    n.push_back({"gpu" + std::to_string(q + 1), K::endpoint, p0 + q, q + 1, q, b, b, l, 0});
  n.push_back({"mem", K::endpoint, 0, quadrants + 1, -1, b, b, l, l});
  return n;
}

pcie::PcieEngineParams params() {
  pcie::PcieEngineParams p;
  p.burst_bytes = 4096;
  p.random_interleave = false;
  p.calendar.period_ps = 1'000'000'000;  // 1 ms
  p.calendar.window_ps = 100'000'000;    // 100 us
  p.calendar.stagger_ps = 200'000'000;
  p.calendar.order = {0, 1, 2, 3};
  p.read_stall.base_ps = 50'000'000;  // 50 us
  p.read_stall.per_byte_ps = 0;
  p.read_stall.jitter = 0;
  p.ordering.ack_latency_ps = 500'000;
  return p;
}

link::ps_t run_one(PcieEngine& e, int src, int dst, std::uint64_t bytes, link::ps_t t, TransferKind k) {
  e.post(src, dst, bytes, t, 7, k);
  std::vector<fabric_core::Completion> out;
  while (out.empty() && e.next_event_time() != link::kNever) e.run(link::kNever, out);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? 0 : out[0].time_ps;
}

}  // namespace

TEST(PcieEngine, SamePartitionTransferIsCutThroughLatencyPlusSerialisation) {
  PcieEngine e(tiny(), params(), 1);
  // gpu0 -> p0 -> gpu1: two edges of 100 ns; 8192 B in two bursts of 4096 ps each.
  // Burst 2 leaves gpu0 at 4096, its tail ends on the last edge at 8192 + 100 ns.
  EXPECT_EQ(run_one(e, 0, 1, 8192, 0, TransferKind::write), 8192u + 100'000u);
  EXPECT_EQ(e.path_names(0, 1), (std::vector<std::string>{"gpu0", "p0", "gpu1"}));
}

TEST(PcieEngine, CrossQuadrantPathRunsThroughBothHostBridgesAndTheDataFabric) {
  PcieEngine e(tiny(), params(), 1);
  EXPECT_EQ(e.path_names(0, 2), (std::vector<std::string>{"gpu0", "p0", "hb0", "q0", "df", "q1", "hb1", "p1", "gpu2"}));
  EXPECT_EQ(e.quadrant_of_rank(2), 1);
  EXPECT_EQ(e.quadrant_of_rank(3), -1);  // host memory sits above the quadrants
}

TEST(PcieEngine, ReadCompletionFromADegradedQuadrantStallsOnlyAcrossQuadrants) {
  // Quadrant 0's window is [0, 100 us): a completion from gpu0 (quadrant 0) to gpu2 stalls 50 us;
  // to gpu1 (same partition) it does not.
  PcieEngine a(tiny(), params(), 1);
  const auto clean = run_one(a, 0, 1, 4096, 10'000'000, TransferKind::read_completion) - 10'000'000;
  PcieEngine b(tiny(), params(), 1);
  const auto cross = run_one(b, 0, 2, 4096, 10'000'000, TransferKind::read_completion) - 10'000'000;
  PcieEngine c(tiny(), params(), 1);
  const auto cross_outside = run_one(c, 0, 2, 4096, 500'000'000, TransferKind::read_completion) - 500'000'000;
  EXPECT_EQ(b.stats().stalled_reads, 1u);
  EXPECT_EQ(cross - cross_outside, 50'000'000u);
  EXPECT_LT(clean, cross_outside);
  EXPECT_EQ(a.stats().stalled_reads, 0u);
  EXPECT_EQ(c.stats().stalled_reads, 0u);
}

TEST(PcieEngine, PostedWritesAndHostMemoryNeverStall) {
  PcieEngine a(tiny(), params(), 1);
  const auto in_window = run_one(a, 0, 2, 4096, 10'000'000, TransferKind::write) - 10'000'000;
  PcieEngine b(tiny(), params(), 1);
  const auto outside = run_one(b, 0, 2, 4096, 500'000'000, TransferKind::write) - 500'000'000;
  EXPECT_EQ(in_window, outside);
  PcieEngine c(tiny(), params(), 1);
  run_one(c, 3, 2, 4096, 10'000'000, TransferKind::read_completion);  // host memory -> gpu2
  EXPECT_EQ(c.stats().stalled_reads, 0u);
}

TEST(PcieEngine, InterleavedWritesToTwoQuadrantsDrainAtEverySwitchUnlessOrderingIsOff) {
  auto fan_out = [](bool ordering, bool interleaved) {
    auto p = params();
    p.ordering.enabled = ordering;
    PcieEngine e(tiny(3), p, 1);
    // gpu0 writes 64 KiB to gpu2 (quadrant 1) and 64 KiB to gpu3 (quadrant 2).
    std::vector<fabric_core::Completion> out;
    e.post(0, 2, 65536, 0, 1, TransferKind::write);
    if (!interleaved)
      while (out.empty()) e.run(link::kNever, out);
    e.post(0, 3, 65536, e.horizon(), 2, TransferKind::write);
    while (out.size() < 2) e.run(link::kNever, out);
    return std::make_pair(out.back().time_ps, e.stats().drains);
  };
  const auto [t_inter, drains_inter] = fan_out(true, true);
  const auto [t_seq, drains_seq] = fan_out(true, false);
  const auto [t_free, drains_free] = fan_out(false, true);
  EXPECT_GE(drains_inter, 15u);  // 32 bursts alternating destinations (round robin)
  EXPECT_LE(drains_seq, 1u);
  EXPECT_EQ(drains_free, 0u);
  EXPECT_GT(t_inter, 3 * t_seq);  // each switch waits a round trip of >= 1.1 us
  EXPECT_LT(t_free, t_seq);       // without ordering, interleaving overlaps the two paths
}

TEST(PcieEngine, FanOutDetectorAddsSwitchesInsideBurstsOnlyWithSeveralDestinations) {
  auto p = params();
  p.ordering.interleave_bytes = 1024;  // 4 pieces per burst
  PcieEngine one(tiny(3), p, 1);
  run_one(one, 0, 2, 65536, 0, TransferKind::write);
  EXPECT_EQ(one.stats().interleaved_switches, 0u);
  PcieEngine two(tiny(3), p, 1);
  std::vector<fabric_core::Completion> out;
  two.post(0, 2, 65536, 0, 1, TransferKind::write);
  two.post(0, 3, 65536, 0, 2, TransferKind::write);
  while (out.size() < 2) two.run(link::kNever, out);
  EXPECT_GT(two.stats().interleaved_switches, 10u);
}

TEST(PcieEngine, MalformedTreesAreRejected) {
  auto n = tiny();
  n[1].parent = -1;  // a second root
  EXPECT_THROW(PcieEngine(n, params(), 1), std::invalid_argument);
  auto m = tiny();
  m.back().rank = 0;  // rank 0 twice
  EXPECT_THROW(PcieEngine(m, params(), 1), std::invalid_argument);
  PcieEngine e(tiny(), params(), 1);
  EXPECT_THROW(e.post(0, 0, 10, 0, 0), std::invalid_argument);
  EXPECT_THROW(e.post(0, 9, 10, 0, 0), std::invalid_argument);
}
