// The reduction check at scale: a tree AllReduce with real data on a
// 2,048-accelerator single-switch pod (small size, so the test stays fast)
// verifies every element exactly. Reduction inputs are chosen so that every
// partial sum is an integer below 2^24 (sw::input_value), hence exact in
// float32 in any summation order. One elaboration per test process.
#include <gtest/gtest.h>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

TEST(ExactAtScale, TreeAllReduceOn2048RanksIsCorrect) {
  const auto doc = config::load_with_overrides(
      std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ualink-pod-64.yaml",
      {"fabric.accelerators=2048", "fabric.switches=1", "defaults.link.channel.error_good=0",
       "defaults.link.channel.error_bad=0", "workload.collective=allreduce", "workload.algorithm=tree",
       "workload.size=8KiB", "workload.data=true", "workload.verify=true"});
  const auto cfg = fabric::parse_fabric(config::root_section(doc));
  ASSERT_EQ(cfg.fabric.accelerators(), 2048u);
  const auto r = sim::run_fabric(cfg);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  EXPECT_EQ(r.json["collective"]["correct"], true);
}
