// Runs that cannot finish stop with a diagnosis naming the module, the port
// and the state (platform.md §5), within bounded wall time. One elaboration
// per test process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"

using namespace fabricsim;

namespace {
fabric::FabricRunConfig ring8(std::vector<std::string> sets) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml", sets);
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
  // Parsed before the run: a run that stops with SystemC threads suspended
  // leaves AddressSanitizer's stack shadow stale (see docs/testing.md).
  const auto cfg = ring8({"workload.size=64KiB"});
  const auto r =
      sim::run_fabric(ring8({"workload.size=64KiB", "defaults.link.retry_limit=3", "defaults.link.channel.error_good=1",
                             "defaults.link.channel.error_bad=1", "defaults.link.channel.magnitude_good=30",
                             "defaults.link.channel.magnitude_bad=30"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_NE(r.link_down.find("went down"), std::string::npos) << r.link_down;
  EXPECT_NE(r.link_down.find("exceeded the retry limit of 3"), std::string::npos) << r.link_down;
  EXPECT_NE(r.link_down.find(".port1 -> fabric.acc"), std::string::npos) << r.link_down;
  EXPECT_EQ(r.terminal_failures, 1u);
  EXPECT_TRUE(r.json["row"]["time_us"].is_null());
  EXPECT_EQ(r.json["status"].get<std::string>(), "link down (retry limit)");
  // The collective did not complete: its output is unfinished, not wrong.
  EXPECT_EQ(r.json["collective"]["correct"], "not checked");
  const std::string csv = sim::collective_csv(cfg, r.row);
  EXPECT_EQ(csv.substr(csv.size() - std::string(",not checked\n").size()), ",not checked\n") << csv;
  EXPECT_NE(r.summary.find("not checked"), std::string::npos) << r.summary;
  EXPECT_EQ(r.summary.find("false"), std::string::npos) << r.summary;
}

// A fabric file whose node kind no model registered fails at elaboration with
// the kind and the registered kinds named.
TEST(FabricFailures, UnknownNodeKindIsAClearError) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring8.yaml", {});
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

// Back-pressure: two senders write to one receiver through a switch whose
// output queues hold 4 flits. The receiver's ingress is the bottleneck; the
// switch's output queue never exceeds its capacity, the blocked input stops
// returning credits and the senders' admission stalls on credits. Nothing is
// dropped and the time is the ingress-bound one.
namespace {
sim::FabricRunResult incast(const std::string& output_queue) {
  const auto doc = config::load_with_overrides(
      std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ualink-pod-64.yaml",
      {"fabric.accelerators=4", "fabric.switches=1", "defaults.link.channel.error_good=0",
       "defaults.link.channel.error_bad=0", "defaults.link.policy.name=fixed-strong", "defaults.link.rx_buffer=16",
       "defaults.switch.output_queue=" + output_queue, "workload.size=64KiB"});
  return sim::run_fabric(fabric::parse_fabric(config::root_section(doc)), [](models::accelerator_api& a) {
    if (a.rank() == 1 || a.rank() == 2) a.wait(a.post_write(0, 0, 0, 65536, 0));
    if (a.rank() == 0) a.wait_flag(0, 2);
  });
}
std::uint64_t col(const std::string& csv, const std::string& from_prefix, const std::string& column) {
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> names;
  for (std::size_t p = 0, q; p <= header.size(); p = q + 1) {
    q = header.find(',', p);
    if (q == std::string::npos) q = header.size();
    names.push_back(header.substr(p, q - p));
  }
  const auto idx = std::find(names.begin(), names.end(), column) - names.begin();
  std::uint64_t best = 0;
  while (std::getline(in, line)) {
    if (line.rfind(from_prefix, 0) != 0) continue;
    std::vector<std::string> v;
    for (std::size_t p = 0, q; p <= line.size(); p = q + 1) {
      q = line.find(',', p);
      if (q == std::string::npos) q = line.size();
      v.push_back(line.substr(p, q - p));
    }
    best = std::max<std::uint64_t>(best, static_cast<std::uint64_t>(std::stod(v[idx])));
  }
  return best;
}
}  // namespace

TEST(BackPressure, FullOutputQueueStallsTheSendersNotTheData) {
  const auto r = incast("4");
  ASSERT_TRUE(r.ok) << r.diagnosis;
  // The switch's port toward rank 0 never queued more than 4 flits ...
  EXPECT_LE(col(r.links_csv, "fabric.sw0,0,", "max_queue"), 4u);
  // ... so an input held flits and the senders waited for credits.
  EXPECT_GT(col(r.links_csv, "fabric.sw0,", "max_input_buffer") + col(r.links_csv, "fabric.acc", "max_input_buffer"),
            0u);
  EXPECT_GT(col(r.links_csv, "fabric.acc1,", "admission_stall_credit_ns") +
                col(r.links_csv, "fabric.acc2,", "admission_stall_credit_ns"),
            0u);
  // The switch module publishes its component's statistics (result.json switches.sw0):
  // every flit of the two 64-KiB writes (2 x 103 flits of 640 B) crossed it, its
  // output queue filled to its bound and inputs blocked behind it.
  const auto& sw = r.json.at("switches").at("sw0");
  EXPECT_EQ(sw.at("received_flits").get<std::uint64_t>(), 206u);
  EXPECT_EQ(sw.at("forwarded_flits").get<std::uint64_t>(), 206u);
  EXPECT_EQ(sw.at("max_output_queue_flits").get<std::uint64_t>(), 4u);
  EXPECT_GT(sw.at("input_blocks").get<std::uint64_t>(), 0u);
  EXPECT_GT(sw.at("input_blocked_ps").get<std::uint64_t>(), 0u);
  EXPECT_EQ(sw.at("max_input_buffer_flits").get<std::uint64_t>(), col(r.links_csv, "fabric.acc", "max_input_buffer"));
}

TEST(BackPressure, UnboundedOutputQueueNeverStalls) {
  const auto r = incast("0");
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_GT(col(r.links_csv, "fabric.sw0,0,", "max_queue"), 4u);
  EXPECT_EQ(col(r.links_csv, "fabric.acc1,", "admission_stall_credit_ns"), 0u);
  EXPECT_EQ(r.json.at("switches").at("sw0").at("input_blocks").get<std::uint64_t>(), 0u);
}
