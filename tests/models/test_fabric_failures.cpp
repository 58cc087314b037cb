// Runs that cannot finish stop with a diagnosis naming the module, the port
// and the state (platform.md §5), within bounded wall time. One elaboration
// per test process.
#include <gtest/gtest.h>

#include <memory>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

namespace {
fabric::FabricRunConfig ring8(std::vector<std::string> sets) {
  auto doc = std::make_shared<config::Document>(
      config::load_document(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml"));
  config::apply_overrides(*doc, sets);
  return fabric::parse_fabric(config::root_section(doc));
}
}  // namespace

// Rank 3 waits for a flag nobody writes while rank 0's write to rank 1 is the
// only traffic: once that lands, every unfinished rank is blocked and no flit
// is in flight. The kernel reports the deadlock, the blocked rank's module
// and what it waits for.
TEST(FabricFailures, RankThatNeverReceivesIsDiagnosed) {
  const auto r = sim::run_fabric(ring8({"workload.size=64KiB"}), [](models::accelerator_api& a) {
    if (a.rank() == 0) a.wait(a.post_write(1, 0, 0, 4096, 0));
    if (a.rank() == 3) a.wait_flag(7, 1);
  });
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.diagnosis.find("deadlock"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("acc3 waits for flag 7 >= 1 (now 0)"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("fabric"), std::string::npos) << r.diagnosis;
}

// A link whose flits always fail exceeds its retry limit: a terminal failure
// is a result (the run stops there, reports no completion time) and the
// diagnosis names the link direction, the flit and the limit.
TEST(FabricFailures, LinkDownOnRetryLimitIsDiagnosed) {
  const auto r = sim::run_fabric(
      ring8({"workload.size=64KiB", "defaults.link.retry_limit=3", "defaults.link.channel.error_good=1",
             "defaults.link.channel.error_bad=1", "defaults.link.channel.magnitude_good=30",
             "defaults.link.channel.magnitude_bad=30"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_NE(r.link_down.find("went down"), std::string::npos) << r.link_down;
  EXPECT_NE(r.link_down.find("exceeded the retry limit of 3"), std::string::npos) << r.link_down;
  EXPECT_NE(r.link_down.find(".port1 -> fabric.acc"), std::string::npos) << r.link_down;
  EXPECT_EQ(r.terminal_failures, 1u);
  EXPECT_TRUE(r.json["row"]["time_us"].is_null());
  EXPECT_EQ(r.json["status"].get<std::string>(), "link down (retry limit)");
}

// A fabric file whose node kind no model registered fails at elaboration with
// the kind and the registered kinds named.
TEST(FabricFailures, UnknownNodeKindIsAClearError) {
  auto doc = std::make_shared<config::Document>(
      config::load_document(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml"));
  auto cfg = fabric::parse_fabric(config::root_section(doc));
  cfg.fabric.nodes[0].kind = "quantum-router";
  try {
    sim::run_fabric(cfg);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("quantum-router"), std::string::npos) << m;
  }
}
