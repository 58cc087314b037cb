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
