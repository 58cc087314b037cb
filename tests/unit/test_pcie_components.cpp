// The PCIe host's other components and their assembly: link directions
// (cut-through FIFO), switch partition and data fabric ports, the router's
// tree checks, and statistics read by name (StatsSource). No SystemC.
#include <gtest/gtest.h>

#include <sstream>

#include "models/common/stats_source.h"
#include "models/pcie/core/data_fabric.h"
#include "models/pcie/core/pcie_engine.h"
#include "models/pcie/core/switch_partition.h"

using namespace fabricsim;
using namespace fabricsim::pcie;
using K = PcieNode::Kind;

TEST(PcieLinkDir, ReservesCutThroughFirstComeFirstServed) {
  PcieLinkDir l;
  l.ps_per_byte = 2.0;
  l.latency_ps = 1000;
  ps_t head = 0, tail = 0;
  EXPECT_EQ(l.reserve(100, head, tail), 200u);  // 100 B x 2 ps
  EXPECT_EQ(head, 1000u);
  EXPECT_EQ(tail, 1200u);
  // A second burst arriving at 50 waits for the first; a tail arriving late stretches it.
  ps_t h2 = 50, t2 = 900;
  EXPECT_EQ(l.reserve(100, h2, t2), 900u);
  EXPECT_EQ(h2, 1200u);
  EXPECT_EQ(t2, 1900u);
  EXPECT_EQ(l.bursts, 2u);
  EXPECT_EQ(l.bytes, 200u);
  EXPECT_EQ(l.busy_ps, 200u + 700u);
}

TEST(PcieSwitchPartition, PublishesPerPortStatistics) {
  PcieSwitchPartition p("sw0_p0", SwitchPartitionParams{0});
  p.ports().add("gpu0", PciePortParams{1.0, 1.0, 150'000, 0});
  p.ports().add("gpu1", PciePortParams{1.0, 1.0, 150'000, 0});
  ps_t h = 0, t = 0;
  p.ports()[1].down.reserve(4096, h, t);
  EXPECT_EQ(common::find_stat(p, "port.gpu1.down_bytes"), 4096u);
  EXPECT_EQ(common::find_stat(p, "port.gpu0.down_bytes"), 0u);
  EXPECT_EQ(common::collect_stats(p).size(), 12u);  // 2 ports x 2 directions x 3
  std::ostringstream os;
  p.dump_state(os);
  EXPECT_NE(os.str().find("port gpu1: up free at 0ns, down free at 4.096ns"), std::string::npos) << os.str();
}

TEST(DataFabric, OwnsTheQuadrantAndHostMemoryPorts) {
  DataFabric df("data_fabric", DataFabricParams{});
  df.ports().add("quadrant0", PciePortParams{});
  df.ports().add("host_memory", PciePortParams{2.5, 2.5, 250'000, 300'000});
  EXPECT_EQ(df.ports().size(), 2u);
  EXPECT_EQ(df.ports()[1].down.latency_ps, 300'000u);
  EXPECT_TRUE(common::find_stat(df, "port.host_memory.up_busy_ps").has_value());
}

namespace {
// df <- q0 <- hb0 <- p0 <- gpu0, gpu1; df <- q1 <- hb1 <- p1 <- gpu2; df <- mem.
std::vector<PcieNode> tree() {
  const double b = 1.0;
  const ps_t l = 100'000;
  return {{"df", K::data_fabric, -1, -1, -1, 0, 0, 0, 0}, {"q0", K::quadrant, 0, -1, 0, b, b, l, l},
          {"q1", K::quadrant, 0, -1, 1, b, b, l, l},      {"hb0", K::host_bridge, 1, -1, 0, b, b, l, l},
          {"hb1", K::host_bridge, 2, -1, 1, b, b, l, l},  {"p0", K::partition, 3, -1, 0, b, b, l, l},
          {"p1", K::partition, 4, -1, 1, b, b, l, l},     {"gpu0", K::endpoint, 5, 0, 0, b, b, l, 0},
          {"gpu1", K::endpoint, 5, 1, 0, b, b, l, 0},     {"gpu2", K::endpoint, 6, 2, 1, b, b, l, 0},
          {"mem", K::endpoint, 0, 3, -1, b, b, l, l}};
}
PcieEngineParams params() {
  PcieEngineParams p;
  p.burst_bytes = 4096;
  p.random_interleave = false;
  p.ordering.ack_latency_ps = 500'000;
  return p;
}
}  // namespace

TEST(PcieEngine, BuildsOneComponentPerTreeElement) {
  PcieEngine e(tree(), params(), 1);
  EXPECT_EQ(e.endpoints().size(), 4u);
  EXPECT_EQ(e.partitions().size(), 2u);
  EXPECT_EQ(e.host_bridges().size(), 2u);
  EXPECT_EQ(e.quadrants().size(), 2u);
  ASSERT_NE(e.data_fabric(), nullptr);
  EXPECT_EQ(e.data_fabric()->ports().size(), 3u);  // q0, q1, host memory
  EXPECT_EQ(e.partitions()[0]->ports().size(), 2u);
  EXPECT_EQ(e.endpoints()[0]->bridge(), e.host_bridges()[0].get());
  EXPECT_EQ(e.endpoints()[2]->quadrant(), e.quadrants()[1].get());
  EXPECT_EQ(e.endpoints()[3]->bridge(), nullptr);  // host memory: no host bridge above
  EXPECT_EQ(e.endpoints()[3]->params().role, PcieEndpointParams::Role::host_memory);
}

TEST(PcieEngine, StatisticsByNameAddUpToTheTotals) {
  PcieEngine e(tree(), params(), 1);
  std::vector<fabric_core::Completion> out;
  e.post(0, 2, 65536, 0, 1, TransferKind::write);
  e.post(1, 3, 8192, 0, 2, TransferKind::write);
  e.post(2, 1, 8192, 0, 3, TransferKind::read_completion);
  while (out.size() < 3) e.run(link::kNever, out);
  const PcieStats s = e.stats();
  EXPECT_EQ(s.bursts, 16u + 2u + 2u);
  EXPECT_EQ(s.reads, 1u);
  EXPECT_EQ(common::find_stat(e, "bursts"), s.bursts);
  EXPECT_EQ(common::sum_stats(e, "bursts"), s.bursts);
  EXPECT_EQ(common::sum_stats(e, "ordered_bursts"), s.ordered_bursts);
  EXPECT_EQ(s.ordered_bursts, 16u + 2u);  // gpu0 -> gpu2 and gpu1 -> host memory pass hb0
  EXPECT_EQ(common::find_stat(e, "hb0.ordered_bursts"), 18u);
  EXPECT_EQ(common::find_stat(e, "gpu2.read_completions"), 1u);
  // Every payload byte of gpu0's write crossed its partition's port up and hb1's port down.
  EXPECT_EQ(common::find_stat(e, "p0.port.gpu0.up_bytes"), 65536u);
  EXPECT_EQ(common::find_stat(e, "hb1.port.p1.down_bytes"), 65536u);
  EXPECT_EQ(common::find_stat(e, "df.port.mem.down_bytes"), 8192u);
}

TEST(PcieEngine, DiagnosisDumpsHeldBurstsAndSendingEndpoints) {
  PcieEngine e(tree(), params(), 1);
  std::vector<fabric_core::Completion> out;
  e.post(0, 2, 65536, 0, 1, TransferKind::write);  // to quadrant 1
  e.post(0, 3, 65536, 0, 2, TransferKind::write);  // to host memory: alternating destinations
  e.run(600'000, out);                             // stop while bursts wait for drains
  const std::string d = e.diagnosis();
  EXPECT_NE(d.find("2 PCIe transfer(s) open"), std::string::npos) << d;
  // gpu0's link is free long before the drains: all 32 bursts left it, 31 wait at hb0
  // behind the first one's destination change (unbounded queues, no credits).
  EXPECT_NE(d.find("ordering point of gpu0: 31 write burst(s) held (head toward destination -2"), std::string::npos)
      << d;
  EXPECT_EQ(d.find("endpoint gpu0"), std::string::npos) << d;  // not sending any more
  std::ostringstream os;
  e.dump_state(os);
  EXPECT_NE(os.str().find("switch partition p1"), std::string::npos);
  EXPECT_NE(os.str().find("data fabric df"), std::string::npos);
}

TEST(PcieRouter, RejectsTreesTheComponentsCannotHold) {
  auto below_endpoint = tree();
  below_endpoint[9].parent = 7;  // gpu2 below gpu0
  EXPECT_THROW(PcieRouter{below_endpoint}, std::invalid_argument);
  auto nested = tree();
  nested[4].parent = 3;  // hb1 below hb0
  EXPECT_THROW(PcieRouter{nested}, std::invalid_argument);
  auto wrong_quadrant = tree();
  wrong_quadrant[9].quadrant = 0;  // gpu2 sits in quadrant 1
  EXPECT_THROW(PcieRouter{wrong_quadrant}, std::invalid_argument);
  auto root = tree();
  root[0].kind = K::quadrant;
  EXPECT_THROW(PcieEngine(root, params(), 1), std::invalid_argument);
  EXPECT_NO_THROW(PcieRouter{tree()});
}
