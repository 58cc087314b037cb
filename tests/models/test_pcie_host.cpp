// The PCIe host (frank2.yaml) end to end: transports through host memory,
// the two mechanisms as seen by the harness, and decode-round selection. One
// elaboration per test process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "platform/config/yaml_config.h"
#include "platform/fabric/host_config.h"
#include "platform/sim/host_platform.h"
#include "platform/sim/host_run.h"

using namespace fabricsim;

namespace {
fabric::HostRunConfig frank2(std::vector<std::string> sets) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/frank2.yaml", sets);
  return fabric::parse_host(config::root_section(doc));
}
}  // namespace

// The elaborated host holds the global address map: every GPU of the host
// (rank = index in the group, -1 outside it) at the GPUs' memory size, host
// memory at its declared base as endpoint N.
TEST(PcieHost, PlatformHoldsTheHostAddressMap) {
  const auto cfg = frank2({"workload.group=[5,0]", "workload.ops=1", "fabric.host_memory.address=1GiB"});
  sim::HostPlatform P(cfg);
  ASSERT_EQ(P.ranks(), 2);
  EXPECT_EQ(P.rank_names(), (std::vector<std::string>{"gpu5", "gpu0"}));
  EXPECT_EQ(P.endpoint_names().back(), "host_memory");
  const auto& m = P.address_map();
  ASSERT_EQ(m.regions().size(), 18u);  // 17 GPUs + host memory
  EXPECT_EQ(P.base_address("host_memory"), 1ull << 30);
  const std::uint64_t gpu_bytes = P.accelerator(0).params().memory_bytes;
  EXPECT_EQ(gpu_bytes, sim::host_gpu_memory_bytes(cfg));
  const auto* gpu0 = m.decode(P.base_address("gpu0"), gpu_bytes);
  ASSERT_NE(gpu0, nullptr);
  EXPECT_EQ(gpu0->name, "gpu0");
  EXPECT_EQ(gpu0->rank, 1);
  EXPECT_EQ(gpu0->base, 0u);  // first fit from 0, GPU ids in order
  EXPECT_EQ(m.decode(P.base_address("gpu1"), 1)->rank, -1);
  EXPECT_EQ(P.base_address("gpu1"), gpu_bytes);
  EXPECT_EQ(m.decode(P.base_address("gpu5"), 1)->rank, 0);
  EXPECT_EQ(m.decode((1ull << 30) + 5, 8)->rank, 2);  // host memory: the kernel's memory-only endpoint N
}

TEST(PcieHost, NcclShmThroughHostMemoryIsExact) {
  const auto r = sim::run_host(
      frank2({"workload.group=[0,4,8,12]", "workload.transport=nccl_shm", "workload.data=true", "workload.ops=2"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.stats.ops, 2u);
}

TEST(PcieHost, PullAcrossQuadrantsIsExactWithRealBytes) {
  const auto r = sim::run_host(frank2({"workload.group=[1,5,9,13]", "workload.transport=pull", "workload.data=true",
                                       "workload.ops=3", "workload.size=400KiB"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct);
}

// Quadrant 0's first window is [0, 175 ms): a 250 ms cell of one-shot pull on
// one GPU per quadrant keeps a clean median but has millisecond operations.
TEST(PcieHost, CrossQuadrantPullStallsInsideTheWindow) {
  const auto r =
      sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.transport=pull", "workload.duration=250ms"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_LT(r.stats.p50_us, 20.0);
  EXPECT_GT(r.stats.ops_over_1ms, 50u);
  EXPECT_GT(r.stats.max_us, 1000.0);
  EXPECT_GT(r.stats.mean_us, 1.5 * r.stats.p50_us);
}

TEST(PcieHost, SameQuadrantPullNeverStalls) {
  const auto r =
      sim::run_host(frank2({"workload.group=[0,1,2,3]", "workload.transport=pull", "workload.duration=250ms"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_EQ(r.stats.ops_over_1ms, 0u);
  EXPECT_LT(r.stats.max_us, 2 * r.stats.p50_us);
}

TEST(PcieHost, FanOutPushAcrossQuadrantsCollapses) {
  const auto r = sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.transport=full", "workload.ops=200"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  // The same data movement one destination at a time takes ~12.5 us here
  // (PhasedPushAcrossQuadrantsStaysClean); fan-out is an order of magnitude slower.
  EXPECT_GT(r.stats.mean_us, 60.0);
  EXPECT_EQ(r.stats.ops_over_1ms, 0u);  // slow, but posted writes never stall
}

TEST(PcieHost, PhasedPushAcrossQuadrantsStaysClean) {
  const auto r =
      sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.transport=full_phased", "workload.ops=200"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_LT(r.stats.mean_us, 15.0);
  EXPECT_LT(r.stats.max_us, 15.0);
}

TEST(PcieHost, FanOutWithoutWriteOrderingDoesNotCollapse) {
  const auto r = sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.transport=full", "workload.ops=200",
                                       "mechanisms.write_ordering.enabled=false"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_LT(r.stats.mean_us, 15.0);
}

TEST(PcieHost, FabricClassSelectionAvoidsReadAndFanOutModesWhenCrossing) {
  const auto r = sim::run_host(frank2(
      {"workload.group=[0,4,8,12]", "workload.mode=decode", "decode.selection=fabric-class", "workload.ops=20"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_EQ(r.json["decode"]["picks"], "81920B=full_phased");
}

// Started between windows (quadrant 0's first window at 1 s), a 2 ms race per
// candidate sees only clean pulls: pull has the best median and wins.
TEST(PcieHost, MedianRaceBetweenWindowsPicksPullOnAQuadrantCrossingGroup) {
  const auto r =
      sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.mode=decode", "decode.selection=race-median",
                            "decode.start_phase=zero", "mechanisms.read_stall.offset=1000ms", "workload.ops=20"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_EQ(r.json["decode"]["picks"], "81920B=pull");
}

// Started inside quadrant 0's window, the same race sees pull stall for
// milliseconds and picks another transport: the choice depends on the start.
TEST(PcieHost, MedianRaceInsideAWindowAvoidsPull) {
  const auto r = sim::run_host(frank2({"workload.group=[0,4,8,12]", "workload.mode=decode",
                                       "decode.selection=race-median", "decode.start_phase=zero", "workload.ops=20"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_NE(r.json["decode"]["picks"], "81920B=pull");
}

// With kernel barriers the one-shot transports open and close with flag
// writes over PCIe: still exact, and every operation pays at least one
// cross-host-bridge flag latency more.
TEST(PcieHost, KernelBarriersKeepResultsExactAndCostAFlagRoundTrip) {
  const auto r = sim::run_host(frank2({"workload.transport=payload_rsag", "workload.data=true", "workload.ops=20",
                                       "workload.kernel_barriers=true", "workload.size=16KiB"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct);
  // Without barriers payload_rsag at 16 KiB on GPUs 0-3 takes 4.0 us (validation.md §5.2); a barrier
  // needs a flag to cross two host bridges (> 1 us one way), twice.
  EXPECT_GT(r.stats.mean_us, 4.0 + 2.0);
}

// ---- users' schedules on the host (workload.algorithm: schedule) ----------------

namespace {
fabric::HostRunConfig host(const std::string& file, const std::string& schedule, std::vector<std::string> sets) {
  sets.insert(sets.begin(), {"workload.algorithm=schedule", "workload.schedule=schedules/" + schedule});
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/" + file, sets);
  return fabric::parse_host(config::root_section(doc));
}
std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

// frank1: eight GPUs behind one switch partition, so each ring message crosses
// GPU -> partition -> GPU at the PCIe link's payload rate (raw Gen5 x16 rate
// x max_payload / (max_payload + TLP overhead), host-bridge.md §8) and the
// reductions run at gpu.reduce_rate: 2(N - 1) messages of n/N bytes and
// N - 1 reductions of n/N bytes back to back, plus the start barrier's cost.
TEST(PcieHostSchedule, RingAllReduce8OnFrank1IsExactAndMeetsTheLinkRate) {
  const auto c = host("frank1.yaml", "ring-allreduce-8.xml", {"workload.group=[0,1,2,3,4,5,6,7]", "workload.size=8MiB"});
  const auto& H = c.host;
  const double n = 8.0 * 1048576, N = 8;
  const double payload_Bps = fabric::pcie_raw_Bps(H.gen, H.lanes) * static_cast<double>(H.max_payload) /
                             static_cast<double>(H.max_payload + H.tlp_overhead);
  const double msg_us = n / N / payload_Bps * 1e6, red_us = n / N / H.gpu.reduce_rate_bytes_per_s * 1e6;
  const double model_us = c.workload.barrier_ps / 1e6 + 2 * (N - 1) * msg_us + (N - 1) * red_us;
  const auto r = sim::run_host(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct) << r.first_wrong;
  EXPECT_EQ(r.json["correct"], true);
  const double t = r.json["collective"]["time_us"].get<double>();
  std::printf("[ link rate ] schedule %.2f us, model %.2f us, ratio %.4f\n", t, model_us, t / model_us);
  EXPECT_NEAR(t / model_us, 1.0, 0.02);
  EXPECT_EQ(r.stats.ops, 1u);
  // Reports: one row per step (8 ranks x 15 steps) and per threadblock, a critical path through every message.
  EXPECT_EQ(lines(r.steps_csv), 8u * 15 + 1);
  EXPECT_EQ(lines(r.threadblocks_csv), 8u + 1);
  EXPECT_EQ(r.json["schedule"]["critical_path"].size(), 15u);
  EXPECT_NE(r.collectives_csv.find("\nallreduce,schedule:ring-allreduce-8,8,8388608,2097152,float,sum,"),
            std::string::npos)
      << r.collectives_csv;
  EXPECT_EQ(r.collectives_csv.substr(r.collectives_csv.size() - 6), ",true\n");
}

// frank2, all 16 GPUs of the four quadrants: the hierarchical AllReduce (YAML form) crosses host bridges and
// the data fabric, under write ordering, and stays exact.
TEST(PcieHostSchedule, HierarchicalAllReduceAcrossQuadrantsIsExact) {
  const auto r = sim::run_host(host("frank2.yaml", "hierarchical-allreduce-4x4.yaml",
                                    {"workload.group=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]", "workload.ops=2"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct) << r.first_wrong;
  EXPECT_EQ(r.stats.ops, 2u);
  EXPECT_GT(r.json["collective"]["time_us"].get<double>(), 0);
}

// AllToAll and AllGather on a quadrant-crossing group of frank2: a GPU posting to several destinations at
// once meets the write-ordering drains (mechanism B), results stay exact.
TEST(PcieHostSchedule, AllToAllAcrossQuadrantsIsExactAndDrains) {
  const auto r = sim::run_host(host("frank2.yaml", "alltoall-8.xml", {"workload.group=[0,4,8,12,1,5,9,13]"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct) << r.first_wrong;
  EXPECT_GT(r.json["engine"]["drains"].get<std::uint64_t>(), 0u);
}
TEST(PcieHostSchedule, RingAllGatherIsExact) {
  const auto r = sim::run_host(host("frank2.yaml", "ring-allgather-8.yaml", {"workload.group=[0,4,8,12,1,5,9,13]"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct) << r.first_wrong;
}

// Two channels: two threadblocks per rank post to the same peer at once, and
// the GPU interleaves its concurrent transfers burst by burst at random, so a
// later message on a connection can land before an earlier one. With one flag
// per connection counting landed messages, a receive used to take the later
// message's landing for its own and read an empty staging slot (rank 0 chunk
// 5 wrong at 8 MiB); one flag per message makes it exact.
TEST(PcieHostSchedule, TwoChannelRingIsExactUnderRandomInterleave) {
  const auto c = host("frank1.yaml", "ring-allreduce-8-c2.xml", {"workload.group=[0,1,2,3,4,5,6,7]", "workload.size=8MiB"});
  ASSERT_TRUE(c.host.engine.random_interleave);
  const auto r = sim::run_host(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.correct) << r.first_wrong;
}
