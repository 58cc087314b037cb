// Whole link-pair runs through the SystemC models (source -> port -> sink).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "models/link/core/link_engine.h"
#include "platform/config/link_config.h"
#include "platform/sim/link_experiment.h"

using namespace fabricsim;

namespace {
config::LinkExperimentConfig primary(const std::vector<std::string>& sets) {
  const auto doc =
      config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/link-primary.yaml", sets);
  return config::parse_link_experiment(config::root_section(doc));
}

// The SystemC path (bursts through sockets, delivered flits checked at the
// sink) must give exactly the plain engine's result: the wrapper adds no timing.
void expect_matches_plain_engine(bool real_bytes) {
  auto cfg = primary({"traffic.flits=3000", "traffic.message_flits=700", "run.seed=105"});
  const auto r = sim::run_link_experiment(cfg, nullptr, real_bytes);
  ASSERT_TRUE(r.ok) << r.diagnosis;

  link::LinkEngine e(cfg.link, link::make_policy(cfg.link.policy_name, cfg.link.fec_menu, cfg.link.policy), 105, 0);
  for (std::uint64_t i = 0; i < 3000; ++i) e.offer(i * 14000);
  ASSERT_EQ(e.run_to_completion(), link::LinkEngine::Status::done);

  EXPECT_EQ(r.metrics.delivered_flits, 3000u);
  EXPECT_EQ(r.json["sink"]["received"].get<int>(), 3000);
  EXPECT_EQ(r.json["sink"]["order_violations"].get<int>(), 0);
  EXPECT_EQ(r.json["sink"]["data_errors"].get<int>(), 0);
  EXPECT_EQ(r.metrics.replayed_flits, e.replayed_flits());
  EXPECT_EQ(r.metrics.fec_bytes, e.stats().fec_bytes);
  const double span_ps = static_cast<double>(e.stats().last_delivery_ps);
  EXPECT_DOUBLE_EQ(r.metrics.goodput_gbps, 3000 * 640 * 8.0 / span_ps * 1e3);
  // P99 from the sink's delivery times equals the engine's own record.
  std::vector<double> lat;
  for (std::uint64_t i = 0; i < 3000; ++i) lat.push_back((e.delivery_time(i) - e.arrival_time(i)) / 1e6);
  std::nth_element(lat.begin(), lat.begin() + 2969, lat.end());  // nearest rank: ceil(0.99 x 3000) = 2970
  EXPECT_DOUBLE_EQ(r.metrics.p99_us, lat[2969]);
  EXPECT_GT(r.metrics.replayed_flits, 0u);  // seed 105 has bursts: the test exercises replay
}
}  // namespace

// Default path (what `fabricsim run` does): flits travel as tags, no payload byte exists.
TEST(LinkPair, MatchesPlainEngineWithTagsOnly) { expect_matches_plain_engine(false); }

// Real bytes made at the source, carried by the port, checked byte by byte at the sink.
TEST(LinkPair, MatchesPlainEngineAndDeliversRealBytesInOrder) { expect_matches_plain_engine(true); }

// A run that cannot finish stops with a diagnosis naming the module, the
// sequence numbers and the state. An ignore window longer than the run makes
// the transmitter drop a genuine re-request: the receiver waits for a flit
// the transmitter will never resend (link-layer.md §1, "Beware").
TEST(LinkPair, DeadlockIsDiagnosedNotHung) {
  auto cfg = primary({"traffic.flits=3000", "run.seed=105", "link.semantics.request_dedup=ignore-window",
                      "link.semantics.ignore_window_flits=1000000000"});
  const auto r = sim::run_link_experiment(cfg);
  ASSERT_FALSE(r.ok);
  // The model's own report, without SystemC's "Error: <type>" head and its file / process lines.
  EXPECT_EQ(r.diagnosis.rfind("port: status=deadlock", 0), 0u) << r.diagnosis;
  EXPECT_EQ(r.diagnosis.find("In file:"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("deadlock"), std::string::npos) << r.diagnosis;
  EXPECT_NE(r.diagnosis.find("rx_expected="), std::string::npos) << r.diagnosis;
}

// Retry limit 1 on a channel that corrupts every flit beyond repair: the first
// failed flit is a terminal failure; the link goes down and says which flit.
TEST(LinkPair, RetryLimitGivesTerminalFailure) {
  auto cfg =
      primary({"traffic.flits=100", "link.retry_limit=1", "link.channel.error_good=1", "link.channel.error_bad=1",
               "link.channel.magnitude_good=30", "link.channel.magnitude_bad=30", "link.policy.name=fixed-strong"});
  const auto r = sim::run_link_experiment(cfg);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_EQ(r.metrics.terminal_failures, 1u);
  EXPECT_EQ(r.json["status"].get<std::string>(), "link down (retry limit)");
  EXPECT_NE(r.json["link"]["diagnosis"].get<std::string>().find("flit seq 0 exceeded the retry limit of 1"),
            std::string::npos);
}
