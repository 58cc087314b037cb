// The UALink switch component alone (models/switch/core/switch_core.h):
// forwarding table, crossbar latency, output-queue admission and credit
// back-pressure, round-robin service of blocked inputs, statistics by name,
// the blocked-input dump. The links around it are a recording fake; the test
// plays the output transmitters' admissions by hand. No SystemC.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <vector>

#include "models/common/stats_source.h"
#include "models/fabric/core/fabric_engine.h"
#include "models/switch/core/switch_core.h"

using namespace fabricsim;
using switching::SwitchParams;
using switching::UalinkSwitch;

namespace {

struct Sent {
  std::uint32_t port;
  link::ps_t t;
  std::uint64_t transfer;
};
struct Credit {
  std::uint32_t port;
  link::ps_t t;
};

// Records what the switch does to its links.
class RecordingLinks : public common::NodeLinks {
 public:
  void send(std::uint32_t port, link::ps_t t, const common::FlitTag& tag) override {
    sent.push_back({port, t, tag.transfer});
  }
  void return_credit(std::uint32_t port, link::ps_t t) override { credits.push_back({port, t}); }
  std::vector<Sent> sent;
  std::vector<Credit> credits;
};

common::FlitTag flit(std::uint64_t id, int dst) { return {id, dst}; }

// A 4-port switch, latency 100 ns, output queues of `queue` flits; rank r is behind port r.
struct Fixture {
  explicit Fixture(std::uint32_t queue, link::ps_t latency = 100'000) : sw("sw0", SwitchParams{latency, queue, 4}) {
    for (int r = 0; r < 4; ++r) sw.set_route(r, static_cast<std::uint32_t>(r));
    sw.bind(links);
  }
  RecordingLinks links;
  UalinkSwitch sw;
};

}  // namespace

TEST(UalinkSwitch, ForwardingTableLookup) {
  UalinkSwitch sw("sw0", SwitchParams{0, 0, 3});
  sw.set_route(5, 2);
  sw.set_route(0, 1);
  EXPECT_EQ(sw.route(5), 2u);
  EXPECT_EQ(sw.route(0), 1u);
  EXPECT_EQ(sw.route(3), UalinkSwitch::kNoPort);   // inside the table, no entry
  EXPECT_EQ(sw.route(9), UalinkSwitch::kNoPort);   // beyond it
  EXPECT_EQ(sw.route(-1), UalinkSwitch::kNoPort);
  EXPECT_THROW(sw.set_route(1, 3), std::invalid_argument);  // port beyond the switch
  EXPECT_THROW(sw.set_route(-2, 0), std::invalid_argument);
  RecordingLinks links;
  sw.bind(links);
  sw.receive(0, 1000, flit(7, 5));
  ASSERT_EQ(links.sent.size(), 1u);
  EXPECT_EQ(links.sent[0].port, 2u);  // by the table, not by the input
  EXPECT_EQ(links.sent[0].transfer, 7u);
  EXPECT_THROW(sw.receive(1, 2000, flit(8, 3)), std::logic_error);  // no entry toward rank 3
}

TEST(UalinkSwitch, CrossbarLatencyAndCreditBack) {
  Fixture f(64, 123'456);
  f.sw.receive(0, 5'000, flit(1, 2));
  f.sw.receive(1, 7'000, flit(2, 3));
  ASSERT_EQ(f.links.sent.size(), 2u);
  EXPECT_EQ(f.links.sent[0].port, 2u);
  EXPECT_EQ(f.links.sent[0].t, 5'000u + 123'456u);  // enters the output queue one crossbar latency later
  EXPECT_EQ(f.links.sent[1].port, 3u);
  EXPECT_EQ(f.links.sent[1].t, 7'000u + 123'456u);
  // The buffer slot is free as soon as the flit crosses: its credit goes back to the input's upstream link at once.
  ASSERT_EQ(f.links.credits.size(), 2u);
  EXPECT_EQ(f.links.credits[0].port, 0u);
  EXPECT_EQ(f.links.credits[0].t, 5'000u);
  EXPECT_EQ(f.links.credits[1].port, 1u);
  EXPECT_EQ(f.links.credits[1].t, 7'000u);
  // Flits in the crossbar count toward the output queue until admitted.
  EXPECT_EQ(f.sw.output_flits(2), 1u);
  f.sw.admitted(2, 200'000);
  EXPECT_EQ(f.sw.output_flits(2), 0u);
  EXPECT_THROW(f.sw.admitted(2, 210'000), std::logic_error);  // nothing left to admit
}

TEST(UalinkSwitch, FullOutputQueueBlocksTheInputAndWithholdsCredits) {
  Fixture f(2);
  f.sw.receive(0, 1'000, flit(1, 3));
  f.sw.receive(0, 2'000, flit(2, 3));
  f.sw.receive(0, 3'000, flit(3, 3));  // output 3 holds 2: blocked
  EXPECT_EQ(f.links.sent.size(), 2u);
  EXPECT_EQ(f.links.credits.size(), 2u);  // the blocked flit's credit is withheld
  EXPECT_EQ(f.sw.blocked_on(0), 3u);
  EXPECT_EQ(f.sw.input_flits(0), 1u);
  // Head of line: a flit behind it waits even though its own output (1) is empty.
  f.sw.receive(0, 4'000, flit(4, 1));
  EXPECT_EQ(f.links.sent.size(), 2u);
  EXPECT_EQ(f.links.credits.size(), 2u);
  EXPECT_EQ(f.sw.input_flits(0), 2u);
  // Other inputs toward other outputs are not held up.
  f.sw.receive(2, 4'500, flit(5, 1));
  ASSERT_EQ(f.links.sent.size(), 3u);
  EXPECT_EQ(f.links.sent[2].transfer, 5u);
  // Output 3 admits one flit into TxReplay at 50 ns: the input drains, credits come back at that instant.
  f.sw.admitted(3, 50'000);
  EXPECT_EQ(f.sw.blocked_on(0), UalinkSwitch::kNoPort);
  EXPECT_EQ(f.sw.input_flits(0), 0u);
  ASSERT_EQ(f.links.sent.size(), 5u);
  EXPECT_EQ(f.links.sent[3].transfer, 3u);
  EXPECT_EQ(f.links.sent[3].port, 3u);
  EXPECT_EQ(f.links.sent[3].t, 150'000u);
  EXPECT_EQ(f.links.sent[4].transfer, 4u);
  EXPECT_EQ(f.links.sent[4].port, 1u);
  ASSERT_EQ(f.links.credits.size(), 5u);
  EXPECT_EQ(f.links.credits[3].port, 0u);
  EXPECT_EQ(f.links.credits[3].t, 50'000u);
  EXPECT_EQ(f.links.credits[4].port, 0u);
  EXPECT_EQ(f.links.credits[4].t, 50'000u);
  EXPECT_EQ(f.sw.output_flits(3), 2u);
}

TEST(UalinkSwitch, UnboundedOutputQueueNeverBlocks) {
  Fixture f(0);
  for (std::uint64_t i = 0; i < 1000; ++i) f.sw.receive(static_cast<std::uint32_t>(i % 3), i, flit(i, 3));
  EXPECT_EQ(f.links.sent.size(), 1000u);
  EXPECT_EQ(f.links.credits.size(), 1000u);
  EXPECT_EQ(f.sw.output_flits(3), 1000u);
  EXPECT_EQ(f.sw.stats().input_blocks, 0u);
}

TEST(UalinkSwitch, BlockedInputsAreServedRoundRobinInTheOrderTheyBlocked) {
  Fixture f(1);
  f.sw.receive(3, 0, flit(100, 0));  // fills output 0
  // Input 1 blocks first with two flits, then input 2 with one.
  f.sw.receive(1, 10, flit(11, 0));
  f.sw.receive(1, 11, flit(12, 0));
  f.sw.receive(2, 20, flit(21, 0));
  EXPECT_EQ(f.sw.waiters(0), (std::vector<std::uint32_t>{1, 2}));
  // Each admission frees one slot. Input 1 sends one flit and, still holding
  // another, blocks again behind input 2 (round robin, not "drain input 1").
  f.sw.admitted(0, 1'000);
  EXPECT_EQ(f.sw.waiters(0), (std::vector<std::uint32_t>{2, 1}));
  f.sw.admitted(0, 2'000);
  EXPECT_EQ(f.sw.waiters(0), (std::vector<std::uint32_t>{1}));
  f.sw.admitted(0, 3'000);
  EXPECT_TRUE(f.sw.waiters(0).empty());
  std::vector<std::uint64_t> order;
  for (const auto& s : f.links.sent) order.push_back(s.transfer);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{100, 11, 21, 12}));
  EXPECT_EQ(f.links.sent[1].t, 1'000u + 100'000u);
  EXPECT_EQ(f.links.sent[2].t, 2'000u + 100'000u);
  EXPECT_EQ(f.links.sent[3].t, 3'000u + 100'000u);
}

TEST(UalinkSwitch, StatisticsByName) {
  Fixture f(1);
  f.sw.receive(3, 0, flit(100, 0));
  f.sw.receive(1, 10, flit(11, 0));    // blocks at 10
  f.sw.receive(1, 11, flit(12, 0));
  f.sw.receive(2, 20, flit(21, 0));    // blocks at 20
  f.sw.admitted(0, 1'000);             // input 1 unblocked (990 ps), blocks again at 1000
  f.sw.admitted(0, 2'000);             // input 2 unblocked (1980 ps)
  f.sw.admitted(0, 3'000);             // input 1 unblocked (2000 ps)
  const auto stats = common::collect_stats(f.sw);
  ASSERT_EQ(stats.size(), 6u);
  EXPECT_EQ(stats[0].first, "received_flits");
  EXPECT_EQ(common::find_stat(f.sw, "received_flits"), 4u);
  EXPECT_EQ(common::find_stat(f.sw, "forwarded_flits"), 4u);
  EXPECT_EQ(common::find_stat(f.sw, "input_blocks"), 3u);
  EXPECT_EQ(common::find_stat(f.sw, "input_blocked_ps"), 990u + 1'980u + 2'000u);
  EXPECT_EQ(common::find_stat(f.sw, "max_input_buffer_flits"), 2u);
  EXPECT_EQ(common::find_stat(f.sw, "max_output_queue_flits"), 1u);
  EXPECT_EQ(f.sw.max_input_flits(1), 2u);
  EXPECT_EQ(f.sw.max_input_flits(2), 1u);
  EXPECT_EQ(f.sw.max_input_flits(0), 0u);
  EXPECT_EQ(f.sw.max_input_flits(3), 1u);  // crossed at once: it counts as one flit held, as if buffered
  EXPECT_EQ(f.sw.input_flits(3), 0u);
}

TEST(UalinkSwitch, DumpNamesTheBlockedInputs) {
  Fixture f(1);
  f.sw.receive(3, 0, flit(100, 0));
  f.sw.receive(1, 10, flit(11, 0));
  f.sw.receive(1, 11, flit(12, 2));
  f.sw.receive(2, 20, flit(21, 0));
  std::ostringstream os;
  EXPECT_EQ(f.sw.dump_blocked(os, 8), 2u);
  EXPECT_EQ(os.str(),
            "\n  sw0 input port 1 holds 2 flit(s) blocked on output port 0 (queue 1 full)"
            "\n  sw0 input port 2 holds 1 flit(s) blocked on output port 0 (queue 1 full)");
  std::ostringstream one;
  EXPECT_EQ(f.sw.dump_blocked(one, 1), 1u);  // capped
  std::ostringstream st;
  f.sw.dump_state(st);
  EXPECT_NE(st.str().find("input 1: 2 flit(s), blocked on output 0 since 0.01ns"), std::string::npos) << st.str();
  EXPECT_NE(st.str().find("output 0: 1 flit(s) queued, 2 input(s) waiting"), std::string::npos) << st.str();
}

TEST(UalinkSwitch, FlitBeforeBindIsAnError) {
  UalinkSwitch sw("sw0", SwitchParams{0, 0, 2});
  sw.set_route(0, 1);
  EXPECT_THROW(sw.receive(0, 0, flit(1, 0)), std::logic_error);
}

// The switch inside the scheduler: acc0 (port 0) -- sw (ports 0, 1) -- acc1
// (port 0), error-free links. The crossbar latency adds exactly once per
// flit's path; the scheduler reports the switch's input buffer in the link
// statistics and feeds back every admission (the output queue drains to 0).
namespace {
struct StarRouting : fabric_core::Routing {
  std::vector<fabric_core::Hop> first_hops(int src, int) const override {
    return {{0, static_cast<std::size_t>(src), 1}};
  }
  fabric_core::Hop next_hop(std::size_t, int dst) const override {
    return {static_cast<std::uint32_t>(dst), static_cast<std::size_t>(dst), dst == 0 ? 0u : 2u};
  }
};
struct Star {
  Star(link::ps_t latency, std::uint32_t queue, std::uint32_t rx_buffer)
      : sw("fabric.sw", SwitchParams{latency, queue, 2}) {
    sw.set_route(0, 0);
    sw.set_route(1, 1);
    link::LinkConfig c;
    c.channel.e_good = 0.0;
    c.channel.e_bad = 0.0;
    c.policy_name = "fixed-strong";
    c.rx_buffer_flits = rx_buffer;
    std::vector<fabric_core::EngineNode> nodes{{"fabric.acc0", true, 0, nullptr},
                                               {"fabric.sw", false, -1, &sw},
                                               {"fabric.acc1", true, 1, nullptr}};
    std::vector<fabric_core::EngineLink> links{{0, 1, 0, 0, c, 0, {}, {}}, {1, 2, 1, 0, c, 1, {}, {}}};
    eng = std::make_unique<fabric_core::FabricEngine>(nodes, links, 1, std::make_shared<StarRouting>());
  }
  link::ps_t send(std::uint64_t bytes) {
    eng->post(0, 1, bytes, 0, 42);
    std::vector<fabric_core::Completion> done;
    while (done.empty() && eng->next_event_time() != link::kNever) eng->run(link::kNever, done);
    EXPECT_EQ(done.size(), 1u);
    return done.empty() ? 0 : done[0].time_ps;
  }
  UalinkSwitch sw;
  std::unique_ptr<fabric_core::FabricEngine> eng;
};
}  // namespace

TEST(UalinkSwitchInFabric, CrossbarLatencyAddsOncePerPath) {
  Star a(0, 64, 64), b(250'000, 64, 64);
  const link::ps_t t0 = a.send(640 * 10), t1 = b.send(640 * 10);
  EXPECT_GT(t0, 0u);
  EXPECT_EQ(t1 - t0, 250'000u);
  EXPECT_EQ(find_stat(b.sw, "forwarded_flits"), 10u);
  EXPECT_EQ(b.sw.output_flits(1), 0u);  // every admission came back to the switch
}

TEST(UalinkSwitchInFabric, SwitchInputBufferIsReportedPerLinkDirection) {
  Star s(0, 64, 64);
  s.send(640 * 20);
  // Direction 0 is acc0 -> sw (into switch input port 0): the switch's buffer;
  // direction 2 is sw -> acc1: an accelerator consumes at once.
  const auto in = s.eng->direction_stats(0);
  EXPECT_EQ(in.from, "fabric.acc0");
  EXPECT_EQ(in.to, "fabric.sw");
  EXPECT_EQ(in.max_input_buffer, s.sw.max_input_flits(0));
  EXPECT_EQ(in.max_input_buffer, 1u);  // never blocked: each flit crosses as it lands
  EXPECT_EQ(s.eng->direction_stats(2).max_input_buffer, 0u);
}

// A transfer long enough to take more than 2^13 direction steps in one run()
// reports progress from inside it (non-decreasing core times) and completes
// at the same instant as without the hook.
TEST(UalinkSwitchInFabric, ProgressHookFiresInsideALongRunWithoutChangingIt) {
  Star plain(0, 64, 64), hooked(0, 64, 64);
  std::vector<link::ps_t> seen;
  hooked.eng->set_progress_hook([&](link::ps_t t) { seen.push_back(t); });
  const link::ps_t t0 = plain.send(640 * 20000), t1 = hooked.send(640 * 20000);
  EXPECT_EQ(t1, t0);
  ASSERT_GE(seen.size(), 2u);
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i], seen[i - 1]);
  EXPECT_LE(seen.back(), t1);
}

TEST(UalinkSwitchInFabric, ALinkOnAPortTheSwitchLacksIsRejected) {
  UalinkSwitch sw("fabric.sw", SwitchParams{0, 0, 1});
  std::vector<fabric_core::EngineNode> nodes{{"fabric.acc0", true, 0, nullptr},
                                             {"fabric.sw", false, -1, &sw},
                                             {"fabric.acc1", true, 1, nullptr}};
  std::vector<fabric_core::EngineLink> links{{0, 1, 0, 0, {}, 0, {}, {}}, {1, 2, 1, 0, {}, 1, {}, {}}};
  EXPECT_THROW(fabric_core::FabricEngine(nodes, links, 1, std::make_shared<StarRouting>()), std::invalid_argument);
  std::vector<fabric_core::EngineNode> bare{{"fabric.acc0", true, 0, nullptr},
                                            {"fabric.sw", false, -1, nullptr},
                                            {"fabric.acc1", true, 1, nullptr}};
  EXPECT_THROW(fabric_core::FabricEngine(bare, links, 1, std::make_shared<StarRouting>()), std::invalid_argument);
}
