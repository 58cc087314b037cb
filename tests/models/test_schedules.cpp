// Users' schedules (sw/schedule*.h) on modelled fabrics with real bytes: every
// shipped schedule in topologies/schedules/ gives the exact result under link
// replay, and the 8-rank ring schedule meets the same alpha-beta time as the
// built-in ring (collectives.md §3). One elaboration per test process; the
// direct comparison with the built-in `ring` (two runs) is a CLI test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "models/link/core/types.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

namespace {

fabric::FabricRunConfig load(const std::string& file, std::vector<std::string> sets) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/" + file, sets);
  return fabric::parse_fabric(config::root_section(doc));
}

std::vector<std::string> schedule(const std::string& op, const std::string& file, const std::string& size = "1MiB") {
  return {"workload.collective=" + op, "workload.algorithm=schedule", "workload.schedule=schedules/" + file,
          "workload.size=" + size};
}

// Real bytes through a ring with the shipped Gilbert-Elliott channel: replays happen, results stay exact.
void expect_exact(const fabric::FabricRunConfig& c) {
  ASSERT_TRUE(c.workload.schedule);
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct) << r.first_wrong;
  EXPECT_EQ(r.first_wrong, "");
  EXPECT_GT(r.row.time_us, 0);
  EXPECT_GT(r.replayed_flits, 0u) << "the test means to exercise replay";
  // One steps.csv row per step of the schedule (header + rows).
  std::size_t steps = 0;
  for (const auto& g : c.workload.schedule->gpus)
    for (const auto& t : g.tbs) steps += t.steps.size();
  EXPECT_EQ(static_cast<std::size_t>(std::count(r.steps_csv.begin(), r.steps_csv.end(), '\n')), steps + 1);
}

}  // namespace

TEST(Schedules, RingAllReduce8MeetsTheRingCostModel) {
  const auto c = load("ring8.yaml", [] {
    auto s = schedule("allreduce", "ring-allreduce-8.xml", "8MiB");
    s.insert(s.begin(), {"defaults.link.channel.error_good=0", "defaults.link.channel.error_bad=0",
                         "defaults.link.policy.name=fixed-strong"});
    return s;
  }());
  // alpha-beta of one ring message (tests/models/test_collectives.cpp): one hop.
  const auto& l = c.default_link;
  const auto& strong = l.fec_menu.back();
  const double flit_ns = link::wire_time_ps(l.flit_bytes * (1.0 + strong.overhead), l.forward_rate_bps) / 1000.0;
  const double alpha = (l.propagation_ps + strong.decode_delay_ps) / 1000.0;
  const double n = 8.0 * 1048576, N = 8;
  const double msg = alpha + std::ceil(n / N / l.flit_bytes) * flit_ns;
  const double red = n / N * 1e9 / c.fabric.nodes.front().accel.reduce_rate_bytes_per_s;
  const double model = 2 * (N - 1) * msg + (N - 1) * red;
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct) << r.first_wrong;
  std::printf("[ alpha-beta ] schedule %.1f ns, model %.1f ns, ratio %.4f\n", r.row.time_us * 1e3, model,
              r.row.time_us * 1e3 / model);
  EXPECT_NEAR(r.row.time_us * 1e3 / model, 1.0, 0.05);
}

TEST(Schedules, RingAllReduce8IsExact) {
  expect_exact(load("ring8.yaml", schedule("allreduce", "ring-allreduce-8.xml")));
}
TEST(Schedules, RingAllReduce8YamlIsExact) {
  expect_exact(load("ring8.yaml", schedule("allreduce", "ring-allreduce-8.yaml")));
}
TEST(Schedules, RingAllReduce8TwoChannelsIsExact) {
  expect_exact(load("ring8.yaml", schedule("allreduce", "ring-allreduce-8-c2.xml")));
}
TEST(Schedules, AllPairsAllReduce8IsExact) {
  expect_exact(load("ring8.yaml", schedule("allreduce", "allpairs-allreduce-8.xml")));
}
TEST(Schedules, AllPairsAllReduce8YamlIsExact) {
  expect_exact(load("ring8.yaml", schedule("allreduce", "allpairs-allreduce-8.yaml")));
}
TEST(Schedules, RingAllGather8IsExact) {
  expect_exact(load("ring8.yaml", schedule("allgather", "ring-allgather-8.xml")));
}
TEST(Schedules, RingAllGather8YamlIsExact) {
  expect_exact(load("ring8.yaml", schedule("allgather", "ring-allgather-8.yaml")));
}
TEST(Schedules, AllPairsAllGather8IsExact) {
  expect_exact(load("ring8.yaml", schedule("allgather", "allpairs-allgather-8.xml")));
}
TEST(Schedules, RingReduceScatter8IsExact) {
  expect_exact(load("ring8.yaml", schedule("reduce_scatter", "ring-reducescatter-8.xml")));
}
TEST(Schedules, ChainBroadcast8IsExact) {
  expect_exact(load("ring8.yaml", schedule("broadcast", "chain-broadcast-8.xml")));
}
TEST(Schedules, AllToAll8IsExact) { expect_exact(load("ring8.yaml", schedule("alltoall", "alltoall-8.xml"))); }
TEST(Schedules, AllToAll8YamlIsExact) { expect_exact(load("ring8.yaml", schedule("alltoall", "alltoall-8.yaml"))); }
TEST(Schedules, HierarchicalAllReduceOnASwitchedPodIsExact) {
  auto s = schedule("allreduce", "hierarchical-allreduce-4x4.xml");
  s.insert(s.begin(), "fabric.accelerators=16");
  expect_exact(load("ualink-pod-64.yaml", s));
}
TEST(Schedules, HierarchicalAllReduceYamlOnASwitchedPodIsExact) {
  auto s = schedule("allreduce", "hierarchical-allreduce-4x4.yaml");
  s.insert(s.begin(), "fabric.accelerators=16");
  expect_exact(load("ualink-pod-64.yaml", s));
}
TEST(Schedules, RankMapRunsTheRingBackwardsAndStaysExact) {
  auto s = schedule("allreduce", "ring-allreduce-8.xml");
  s.push_back("workload.rank_map=[acc0, acc7, acc6, acc5, acc4, acc3, acc2, acc1]");
  const auto c = load("ring8.yaml", s);
  ASSERT_EQ(c.workload.rank_map, (std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1}));
  expect_exact(c);
}

// With a threadblock rate R, every ring step streams one chunk C at <= R:
// the schedule cannot finish before 2 (N - 1) C / R.
TEST(Schedules, ThreadblockRateBoundsTheRing) {
  auto s = schedule("allreduce", "ring-allreduce-8.xml", "8MiB");
  s.push_back("defaults.accelerator.threadblock_rate=20GB/s");
  const auto c = load("ring8.yaml", s);
  ASSERT_DOUBLE_EQ(c.fabric.nodes.front().accel.threadblock_rate_bytes_per_s, 20e9);
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct) << r.first_wrong;
  const double bound_us = 2 * 7 * (1048576.0 / 20e9) * 1e6;
  EXPECT_GT(r.row.time_us, bound_us);
  EXPECT_LT(r.row.time_us, 1.25 * bound_us);  // the rate, not the 400 Gb/s link, sets the pace
}
