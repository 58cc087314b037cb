// PCIe host files (platform/fabric/host_config): frank2.yaml's structure, the
// engine tree built from it, and errors that name the key.
#include <gtest/gtest.h>

#include "models/pcie/core/pcie_engine.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/host_config.h"

using namespace fabricsim;

namespace {
fabric::HostRunConfig frank2(std::vector<std::string> sets = {}) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/frank2.yaml", sets);
  return fabric::parse_host(config::root_section(doc));
}
std::string error_of(std::vector<std::string> sets) {
  try {
    frank2(sets);
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(HostConfig, Frank2HasTheReportsTopology) {
  const auto c = frank2();
  const auto& H = c.host;
  EXPECT_EQ(H.quadrants, 4);
  EXPECT_EQ(H.bridges.size(), 8u);
  EXPECT_EQ(H.partitions.size(), 8u);
  ASSERT_EQ(H.gpus.size(), 17u);
  EXPECT_EQ(H.gpus[16].lanes, 4u);
  EXPECT_EQ(H.bridges[H.partitions[H.gpus[16].partition].bridge].bus, "e0");
  for (int g : {0, 4, 8, 12}) EXPECT_EQ(fabric::gpu_quadrant(H, g), g / 4);
  EXPECT_NEAR(fabric::pcie_raw_Bps(5, 16) / 1e9, 63.0, 0.05);  // 32 GT/s x 16 x 128/130 / 8
}

TEST(HostConfig, TreeGivesTheThreePathClasses) {
  const auto c = frank2();
  pcie::PcieEngine e(fabric::host_tree(c.host, {0, 1, 2, 4}), c.host.engine, 1);
  EXPECT_EQ(e.path_names(0, 1).size(), 3u);  // gpu0, partition, gpu1
  EXPECT_EQ(e.path_names(0, 2).size(), 7u);  // ... two host bridges of one quadrant
  EXPECT_EQ(e.path_names(0, 3).size(), 9u);  // ... through the data fabric
  EXPECT_EQ(e.quadrant_of_rank(4), -1);      // host memory
  // A group on all four quadrants has a degraded target 4 x 175 / 2300 of the time.
  EXPECT_NEAR(e.calendar().degraded_fraction({0, 1, 2, 3}), 4 * 175.0 / 2300.0, 1e-9);
}

TEST(HostConfig, ImpossibleParametersNameTheirKey) {
  EXPECT_NE(error_of({"mechanisms.read_stall.window=2500ms"}).find("mechanisms.read_stall.window"), std::string::npos);
  EXPECT_NE(error_of({"mechanisms.read_stall.stagger=800ms"}).find("mechanisms.read_stall.stagger"), std::string::npos);
  EXPECT_NE(error_of({"workload.group=[0,4,8,17]"}).find("workload.group"), std::string::npos);
  EXPECT_NE(error_of({"workload.size=81924B"}).find("workload.size"), std::string::npos);
  EXPECT_NE(error_of({"engine.burst=0B"}).find("engine.burst"), std::string::npos);
  EXPECT_NE(error_of({"workload.transport=nccl_shm", "fabric.host_memory.size=64KiB"}).find("fabric.host_memory.size"),
            std::string::npos);
  EXPECT_EQ(error_of({"mechanisms.write_ordering.enabled=false"}), "");
}

// ---- users' schedules on a host (workload.algorithm: schedule) ----------------

namespace {
std::vector<std::string> host_schedule(const std::string& file, std::vector<std::string> more = {}) {
  std::vector<std::string> s{"workload.algorithm=schedule", "workload.schedule=schedules/" + file,
                             "workload.size=1MiB"};
  s.insert(s.end(), more.begin(), more.end());
  return s;
}
}  // namespace

TEST(HostConfig, ScheduleRunsOnTheGroupWithRealBytesOnce) {
  const auto c = frank2(host_schedule("ring-allreduce-8.yaml", {"workload.group=[0,4,8,12,1,5,9,13]"}));
  ASSERT_TRUE(c.workload.schedule);
  EXPECT_EQ(c.workload.schedule->ngpus, 8);
  EXPECT_EQ(c.workload.group, (std::vector<int>{0, 4, 8, 12, 1, 5, 9, 13}));
  EXPECT_EQ(c.workload.collective, sw::Op::allreduce);
  EXPECT_TRUE(c.workload.data);  // frank2.yaml leaves data to its default: real bytes for a schedule
  EXPECT_EQ(c.workload.ops, 1u);
  EXPECT_NE(c.workload.schedule_path.find("topologies/schedules/ring-allreduce-8.yaml"), std::string::npos);
  // Without a group, the schedule's ranks take GPUs 0..ngpus-1.
  auto d = host_schedule("hierarchical-allreduce-4x4.xml");
  d.push_back("workload.group=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]");
  EXPECT_EQ(frank2(d).workload.group.size(), 16u);
  // A transport run keeps its defaults.
  EXPECT_FALSE(frank2().workload.data);
  EXPECT_EQ(frank2().workload.ops, 0u);
}

TEST(HostConfig, BadScheduleCombinationsNameFileLineAndKey) {
  // More ranks than the group has GPUs.
  const std::string g = error_of(host_schedule("ring-allreduce-8.xml"));
  EXPECT_NE(g.find("frank2.yaml:"), std::string::npos) << g;
  EXPECT_NE(g.find("key 'workload.group'"), std::string::npos) << g;
  EXPECT_NE(g.find("ring-allreduce-8.xml:2: the schedule is for ngpus=8 ranks, the group lists 4 GPUs"),
            std::string::npos)
      << g;
  // More ranks than the host has GPUs (no group given).
  const auto doc = [] {
    auto d = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/frank1.yaml",
                                         host_schedule("allpairs-allreduce-64.xml"));
    d->root["workload"].remove("group");
    return d;
  }();
  std::string h;
  try {
    fabric::parse_host(config::root_section(doc));
  } catch (const config::ConfigError& e) {
    h = e.what();
  }
  EXPECT_NE(h.find("--set workload.schedule: "), std::string::npos) << h;
  EXPECT_NE(h.find("ngpus=64 ranks, the host has 8 GPUs"), std::string::npos) << h;
  // The collective disagrees with the file's coll.
  const std::string c = error_of(host_schedule("ring-allgather-8.xml", {"workload.group=[0,1,2,3,4,5,6,7]",
                                                                        "workload.collective=allreduce"}));
  EXPECT_NE(c.find("--set workload.collective: "), std::string::npos) << c;
  EXPECT_NE(c.find("disagrees with workload.collective"), std::string::npos) << c;
  // A size the chunks cannot split (16 chunks per loop: a multiple of 64 B).
  const std::string z = error_of(host_schedule("ring-allreduce-8-c2.xml", {"workload.group=[0,1,2,3,4,5,6,7]",
                                                                        "workload.size=4128B"}));
  EXPECT_NE(z.find("--set workload.size: "), std::string::npos) << z;
  EXPECT_NE(z.find("not a positive multiple of 4 B x nchunksperloop (64 B)"), std::string::npos) << z;
  // Decode rounds, rank_map, and schedule keys without a schedule.
  EXPECT_NE(error_of(host_schedule("ring-allreduce-8.xml", {"workload.group=[0,1,2,3,4,5,6,7]", "workload.mode=decode"}))
                .find("--set workload.mode: "),
            std::string::npos);
  EXPECT_NE(error_of(host_schedule("ring-allreduce-8.xml", {"workload.group=[0,1,2,3,4,5,6,7]",
                                                            "workload.rank_map=[1,0,2,3,4,5,6,7]"}))
                .find("--set workload.rank_map: "),
            std::string::npos);
  EXPECT_NE(error_of({"workload.schedule=schedules/ring-allreduce-8.xml"}).find("only read with workload.algorithm"),
            std::string::npos);
  const std::string a = error_of({"workload.algorithm=ring"});
  EXPECT_NE(a.find("--set workload.algorithm: "), std::string::npos) << a;
  EXPECT_NE(a.find("schedule"), std::string::npos) << a;
  // A malformed schedule: its own file and line, at key workload.schedule.
  const std::string m = error_of(
      {"workload.algorithm=schedule", "workload.schedule=" + std::string(FABRICSIM_SOURCE_DIR) +
                                          "/tests/cli/fixtures/schedules/unknown-type.xml"});
  EXPECT_NE(m.find("--set workload.schedule: "), std::string::npos) << m;
  EXPECT_NE(m.find("unknown-type.xml:"), std::string::npos) << m;
}
