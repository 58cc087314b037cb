// examples/tlm_initiator: runs build/example_tlm_initiator on the shipped
// 64-accelerator pod and checks its output: the bytes read back, and the
// latencies against the analytic sum of the path's serialization,
// propagation, switch and FEC decode delays, computed here from the fabric
// file's parameters and the route of the fabric graph (within 1 %).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/link/core/policy.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/fabric/fabric_graph.h"
#include "platform/sim/fabric_platform.h"

using namespace fabricsim;

namespace {

const std::string kPod = std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ualink-pod-64.yaml";

struct ExampleRun {
  int status = -1;
  std::string out;
};

ExampleRun run_example(const std::vector<std::string>& sets) {
  std::string cmd = std::string(EXAMPLE_TLM_INITIATOR) + " " + kPod;
  for (const auto& s : sets) cmd += " --set " + s;
  cmd += " 2>/dev/null";
  ExampleRun r;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The number after "LABEL: " (ns), or -1 if the line is missing.
double figure_ns(const std::string& out, const std::string& label) {
  const auto at = out.find(label + ": ");
  if (at == std::string::npos) return -1;
  return std::stod(out.substr(at + label.size() + 2));
}

// Replayed flits summed over the "link ..., N replayed, ..." lines.
long replayed(const std::string& out) {
  long sum = 0;
  for (std::size_t at = out.find(" replayed,"); at != std::string::npos; at = out.find(" replayed,", at + 1)) {
    std::size_t b = at;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(out[b - 1]))) --b;
    sum += std::stol(out.substr(b, at - b));
  }
  return sum;
}

/// One hop of the route: the link's parameters and the node it leads to.
struct Hop {
  const link::LinkConfig* link;
  std::size_t to;
};

/// The analytic view of the path from the example's initiator to `target`
/// and back, from the fabric file: route by the fabric graph, per-link
/// serialization (flit x (1 + FEC overhead) at the forward rate), propagation,
/// FEC decode delay of `profile`, switch latency of every switch crossed.
struct Path {
  fabric::FabricRunConfig cfg;
  std::vector<Hop> there, back;

  Path(const std::vector<std::string>& sets, const std::string& at_node, std::uint32_t at_port) {
    cfg = fabric::parse_fabric(config::root_section(config::load_with_overrides(kPod, sets)));
    sim::attach_tlm_initiator(cfg, "cpu0", at_node, at_port);
    const fabric::FabricGraph g(cfg.fabric);
    const int init = static_cast<int>(cfg.fabric.accelerators());  // the first endpoint after the accelerators
    int acc = -1;
    for (const auto& n : cfg.fabric.nodes)
      if (n.id == "acc5") acc = n.rank;
    there = route(g, init, acc);
    back = route(g, acc, init);
  }
  std::vector<Hop> route(const fabric::FabricGraph& g, int src, int dst) const {
    std::vector<Hop> hops;
    const auto first = g.first_hops(src, dst);
    EXPECT_EQ(first.size(), 1u) << "one path only (the initiator has one link)";
    std::size_t node = first.at(0).next_node;
    hops.push_back({&cfg.fabric.links[first[0].link].link, node});
    while (g.rank_of(node) != dst) {
      const auto& h = g.next_hop(node, dst);
      hops.push_back({&cfg.fabric.links[h.link].link, h.next_node});
      node = h.next_node;
    }
    return hops;
  }
  static double wire_ns(const link::LinkConfig& l, std::size_t prof) {
    return l.flit_bytes * (1 + l.fec_menu[prof].overhead) * 8 / l.forward_rate_bps * 1e9;
  }
  /// Time for `flits` flits over `hops` with FEC profile `prof` on every
  /// link: the last flit leaves the source after `flits` serializations and
  /// is serialized again at every forwarding node (cut-through per flit,
  /// nothing else on the path), plus per link propagation and decode, plus
  /// the switch latency of every intermediate node.
  double ns(const std::vector<Hop>& hops, int flits, std::size_t prof) const {
    double t = 0;
    for (std::size_t i = 0; i < hops.size(); ++i) {
      const auto& l = *hops[i].link;
      t += (i == 0 ? flits : 1) * wire_ns(l, prof) + l.propagation_ps / 1e3 + l.fec_menu[prof].decode_delay_ps / 1e3;
      if (i + 1 < hops.size()) {
        const auto& n = cfg.fabric.nodes[hops[i].to];
        EXPECT_EQ(n.kind, "ualink-switch");
        t += n.sw.latency_ps / 1e3;
      }
    }
    return t;
  }
  int flits(std::uint64_t bytes) const {
    return static_cast<int>((bytes + cfg.default_link.flit_bytes - 1) / cfg.default_link.flit_bytes);
  }
  double memory_ns() const {
    for (const auto& n : cfg.fabric.nodes)
      if (n.id == "acc5") return n.accel.memory_latency_ps / 1e3;
    return 0;
  }
};

void expect_within_1pct(double measured, double analytic, const std::string& what) {
  EXPECT_GT(measured, 0) << what;
  EXPECT_NEAR(measured, analytic, 0.01 * analytic)
      << what << ": measured " << measured << " ns, analytic " << analytic << " ns";
}

// "attached tlm-initiator cpu0 at NODE.PORT" -> (NODE, PORT); ("", 0) if missing.
std::pair<std::string, std::uint32_t> attached_at(const std::string& out) {
  const std::string key = "attached tlm-initiator cpu0 at ";
  const auto at = out.find(key);
  if (at == std::string::npos) return {"", 0};
  const std::string ep = out.substr(at + key.size(), out.find('\n', at) - at - key.size());
  const auto dot = ep.rfind('.');
  if (dot == std::string::npos) return {"", 0};
  return {ep.substr(0, dot), static_cast<std::uint32_t>(std::stoul(ep.substr(dot + 1)))};
}

}  // namespace

// The shipped pod as it is (PREFACE, Gilbert-Elliott channel): the pattern
// reads back; the first store's two flits (one per link, each direction's
// first) use the profile the policy starts with, so it is the analytic sum.
TEST(ExampleTlmInitiator, ShippedPodReadsBackAndFirstStoreIsAnalytic) {
  const ExampleRun r = run_example({});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("read-back ok"), std::string::npos) << r.out;
  const auto [node, port] = attached_at(r.out);
  ASSERT_FALSE(node.empty()) << r.out;
  const Path p({}, node, port);
  ASSERT_EQ(p.there.size(), 2u) << "cpu0 -> switch -> acc5";
  const auto& l = p.cfg.default_link;
  const std::size_t first = link::make_policy(l.policy_name, l.fec_menu, l.policy)->decision().profile;
  expect_within_1pct(figure_ns(r.out, "store latency (64 B)"), p.ns(p.there, p.flits(64), first), "first store");
}

// The same pod with one fixed FEC profile (fixed-strong): every figure is
// analytic. A load is a one-flit request to acc5, its memory latency, then
// the data back (ceil(bytes / flit) flits).
TEST(ExampleTlmInitiator, FixedProfileLatenciesAreAnalytic) {
  const std::vector<std::string> sets = {"defaults.link.policy.name=fixed-strong"};
  const ExampleRun r = run_example(sets);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("read-back ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" replayed,"), std::string::npos) << r.out;
  EXPECT_EQ(replayed(r.out), 0) << "a replay on the path: the analytic sum does not apply\n" << r.out;
  const auto [node, port] = attached_at(r.out);
  const Path p(sets, node, port);
  const std::size_t strong = p.cfg.default_link.fec_menu.size() - 1;
  const double request = p.ns(p.there, 1, strong);
  expect_within_1pct(figure_ns(r.out, "store latency (64 B)"), p.ns(p.there, p.flits(64), strong), "store");
  expect_within_1pct(figure_ns(r.out, "round-trip latency (64 B load)"),
                     request + p.memory_ns() + p.ns(p.back, p.flits(64), strong), "64-B load");
  expect_within_1pct(figure_ns(r.out, "round-trip latency (4096 B burst load)"),
                     request + p.memory_ns() + p.ns(p.back, p.flits(4096), strong), "4096-B burst load");
}

// The pod with RIFL links (the initiator's own link stays UALink): the
// example reads back what it stored and reports the RIFL directions in frames.
TEST(ExampleTlmInitiator, RiflFabricReadsBackAndReportsFrames) {
  const ExampleRun r = run_example({"defaults.link.protocol=rifl"});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("read-back ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" (RIFL): "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" frames, 0 retransmitted"), std::string::npos) << r.out;
}

// A timing-only fabric (workload.data: false): the same latencies, every
// access answered OK, and the example says it cannot check the bytes (it
// printed "read-back WRONG" and exited 1).
TEST(ExampleTlmInitiator, TimingOnlyFabricIsTimedAndNotChecked) {
  const ExampleRun timed = run_example({"workload.data=false"});
  ASSERT_EQ(timed.status, 0) << timed.out;
  EXPECT_NE(timed.out.find("read-back not checked"), std::string::npos) << timed.out;
  EXPECT_EQ(timed.out.find("error response"), std::string::npos) << timed.out;
  const ExampleRun full = run_example({});
  EXPECT_EQ(figure_ns(timed.out, "store latency (64 B)"), figure_ns(full.out, "store latency (64 B)"));
  EXPECT_EQ(figure_ns(timed.out, "round-trip latency (4096 B burst load)"),
            figure_ns(full.out, "round-trip latency (4096 B burst load)"));
}
