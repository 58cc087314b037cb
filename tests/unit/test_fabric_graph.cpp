// Unit tests for platform/fabric/fabric_graph.{h,cpp}: validation errors,
// hop-count routes (rings, switched pods, parallel links), DOT, summary, and
// the build of a 1024-accelerator x 8-switch pod.
// Expected values are worked out by hand in the comments.

#include "platform/fabric/fabric_graph.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <gtest/gtest.h>

namespace {

using fabricsim::fabric::FabricError;
using fabricsim::fabric::FabricGraph;
using fabricsim::fabric::FabricSpec;
using fabricsim::fabric::Hop;
using fabricsim::fabric::LinkSpec;
using fabricsim::fabric::NodeSpec;
using fabricsim::fabric::SourceRef;

NodeSpec acc(const std::string& id, int rank) {
  NodeSpec n;
  n.id = id;
  n.kind = "accelerator";
  n.rank = rank;
  n.src = {"test.yaml:" + std::to_string(rank + 10) + ":3", "nodes[" + id + "]"};
  return n;
}

NodeSpec sw(const std::string& id, std::uint32_t ports = 0) {
  NodeSpec n;
  n.id = id;
  n.kind = "ualink-switch";
  n.ports = ports;
  n.src = {"test.yaml:99:3", "nodes[" + id + "]"};
  return n;
}

void add_link(FabricSpec& f, std::size_t a, std::uint32_t ap, std::size_t b, std::uint32_t bp) {
  LinkSpec l;
  l.a = a;
  l.a_port = ap;
  l.b = b;
  l.b_port = bp;
  l.id = f.links.size();
  l.src = {"test.yaml:" + std::to_string(200 + f.links.size()) + ":5", "links[" + std::to_string(f.links.size()) + "]"};
  f.links.push_back(l);
}

/// Ring of n accelerators: acc i port 1 <-> acc (i+1)%n port 0; link i.
FabricSpec ring(int n) {
  FabricSpec f;
  f.name = "ring" + std::to_string(n);
  f.generator = "ring";
  for (int i = 0; i < n; ++i) f.nodes.push_back(acc("acc" + std::to_string(i), i));
  for (int i = 0; i < n; ++i) add_link(f, i, 1, (i + 1) % n, 0);
  return f;
}

/// Switched pod: n accelerators (nodes 0..n-1), s switches (nodes n..n+s-1);
/// acc i port k <-> switch k port i; link index i*s + k.
FabricSpec pod(int n, int s) {
  FabricSpec f;
  f.name = "pod";
  f.generator = "switched-pod";
  for (int i = 0; i < n; ++i) f.nodes.push_back(acc("acc" + std::to_string(i), i));
  for (int k = 0; k < s; ++k) f.nodes.push_back(sw("sw" + std::to_string(k)));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < s; ++k) add_link(f, i, k, n + k, i);
  return f;
}

/// Runs `make` and returns the FabricError message ("" if nothing thrown).
template <class F>
std::string error_of(F make) {
  try {
    make();
  } catch (const FabricError& e) {
    return e.what();
  }
  return "";
}

// The constructor's error, which FabricGraph::validate (the checks without
// the routing tables) must raise alike.
std::string expect_error(const FabricSpec& f) {
  std::string msg = error_of([&] { FabricGraph g(f); });
  EXPECT_FALSE(msg.empty()) << "no FabricError thrown";
  EXPECT_EQ(error_of([&] { FabricGraph::validate(f); }), msg);
  return msg;
}

// ---------------------------------------------------------------------------
// Ring of 8

TEST(FabricGraphRing, SizesAndRanks) {
  FabricGraph g(ring(8));
  EXPECT_EQ(g.num_nodes(), 8u);
  EXPECT_EQ(g.num_links(), 8u);
  ASSERT_EQ(g.accelerators().size(), 8u);
  for (std::size_t r = 0; r < 8; ++r) EXPECT_EQ(g.accelerators()[r], r);
  EXPECT_EQ(g.rank_of(3), 3);
  EXPECT_EQ(g.node_id(3), "acc3");
  EXPECT_EQ(g.node_kind(3), "accelerator");
}

TEST(FabricGraphRing, HopsDiameterPathClasses) {
  FabricGraph g(ring(8));
  EXPECT_EQ(g.hops(0, 4), 4);
  EXPECT_EQ(g.hops(0, 1), 1);
  EXPECT_EQ(g.hops(0, 7), 1);  // wraps around
  EXPECT_EQ(g.hops(6, 1), 3);  // 6->7->0->1
  EXPECT_EQ(g.hops(2, 2), 0);
  EXPECT_EQ(g.diameter(), 4);
  // Each of 8 sources has 2 ranks at 1, 2, 3 hops and 1 at 4 hops: 16,16,16,8 (sum 56 = 8*7).
  std::map<int, std::size_t> want{{1, 16}, {2, 16}, {3, 16}, {4, 8}};
  EXPECT_EQ(g.path_classes(), want);
}

TEST(FabricGraphRing, FirstHops) {
  FabricGraph g(ring(8));
  // 0 -> 1: only port 1 (link 0 to acc1).
  auto h = g.first_hops(0, 1);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0], (Hop{1, 0, 1}));
  // 0 -> 7: only port 0 (link 7 from acc7 port 1).
  h = g.first_hops(0, 7);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0], (Hop{0, 7, 7}));
  // 0 -> 4: opposite side, both ports, sorted by port.
  h = g.first_hops(0, 4);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (Hop{0, 7, 7}));
  EXPECT_EQ(h[1], (Hop{1, 0, 1}));
  EXPECT_TRUE(g.first_hops(3, 3).empty());
}

TEST(FabricGraphRing, NextHopAtAcceleratorsForwards) {
  FabricGraph g(ring(8));
  // acc2 toward rank 0: 2 -> 1 -> 0, port 0.
  EXPECT_EQ(g.next_hop(2, 0).port, 0u);
  EXPECT_EQ(g.next_hop(2, 0).next_node, 1u);
  // acc2 toward rank 5: port 1.
  EXPECT_EQ(g.next_hop(2, 5).port, 1u);
  // acc1 toward rank 5: two candidates (ports 0, 1); index (1+5)%2 = 0 -> port 0.
  EXPECT_EQ(g.next_hop(1, 5).port, 0u);
  EXPECT_EQ(g.distance(1, 5), 4);
  EXPECT_THROW(g.next_hop(4, 4), std::invalid_argument);
}

TEST(FabricGraphRing, OutOfRangeQueries) {
  FabricGraph g(ring(4));
  EXPECT_THROW(g.hops(0, 4), std::out_of_range);
  EXPECT_THROW(g.hops(-1, 0), std::out_of_range);
  EXPECT_THROW(g.first_hops(0, 9), std::out_of_range);
  EXPECT_THROW(g.next_hop(4, 0), std::out_of_range);
  EXPECT_THROW(g.ports(17), std::out_of_range);
}

TEST(FabricGraphRing, TwoNodeRingHasParallelLinks) {
  // ring(2): acc0 p1 <-> acc1 p0 and acc1 p1 <-> acc0 p0: two parallel links.
  FabricGraph g(ring(2));
  EXPECT_EQ(g.hops(0, 1), 1);
  auto h = g.first_hops(0, 1);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (Hop{0, 1, 1}));
  EXPECT_EQ(h[1], (Hop{1, 0, 1}));
  EXPECT_EQ(g.diameter(), 1);
}

// ---------------------------------------------------------------------------
// Switched pod: 4 accelerators x 2 switches

TEST(FabricGraphPod, HopsAndFirstHops) {
  FabricGraph g(pod(4, 2));
  EXPECT_EQ(g.num_nodes(), 6u);
  EXPECT_EQ(g.num_links(), 8u);
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) EXPECT_EQ(g.hops(s, d), s == d ? 0 : 2);
  EXPECT_EQ(g.diameter(), 2);
  EXPECT_EQ(g.path_classes(), (std::map<int, std::size_t>{{2, 12}}));
  auto h = g.first_hops(1, 3);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], (Hop{0, 2, 4}));  // acc1 port 0, link 1*2+0, sw0 (node 4)
  EXPECT_EQ(h[1], (Hop{1, 3, 5}));  // acc1 port 1, link 1*2+1, sw1 (node 5)
}

TEST(FabricGraphPod, SwitchForwardingTable) {
  FabricGraph g(pod(4, 2));
  for (std::size_t s = 4; s < 6; ++s)
    for (int d = 0; d < 4; ++d) {
      const Hop& h = g.next_hop(s, d);
      EXPECT_EQ(h.port, static_cast<std::uint32_t>(d)) << "switch node " << s << " dst " << d;
      EXPECT_EQ(h.next_node, static_cast<std::size_t>(d));
      EXPECT_EQ(h.link, d * 2 + (s - 4));
      EXPECT_EQ(g.distance(s, d), 1);
    }
}

TEST(FabricGraphPod, AcceleratorSpreadsOverEqualCostHops) {
  FabricGraph g(pod(4, 2));
  // Candidates of acc v toward d: ports 0, 1; choice index (v + d) % 2.
  for (std::size_t v = 0; v < 4; ++v)
    for (int d = 0; d < 4; ++d)
      if (static_cast<int>(v) != d) {
        EXPECT_EQ(g.next_hop(v, d).port, (v + d) % 2) << v << "->" << d;
      }
}

// Forwarding entries are resolved on first use: any order of lookups gives
// the rule's port (the ((v + d) mod c)-th of the c ports one hop closer, in
// port order), here on a pod of 5 accelerators and 3 switches with a second
// tier: two-hop routes through a spine have several equal-cost ports.
TEST(FabricGraphPod, ForwardingIsTheSameInAnyLookupOrder) {
  FabricSpec f = pod(5, 3);
  const int n = 5, s = 3;
  f.nodes.push_back(sw("spine"));  // node 8, linked to every switch on port 10 + k
  for (int k = 0; k < s; ++k) add_link(f, n + k, 10, n + s, static_cast<std::uint32_t>(k));
  const FabricGraph a(f), b(f);
  std::vector<std::pair<std::size_t, int>> pairs;
  for (std::size_t v = 0; v < a.num_nodes(); ++v)
    for (int d = 0; d < n; ++d)
      if (a.accelerators()[static_cast<std::size_t>(d)] != v) pairs.emplace_back(v, d);
  std::vector<Hop> forward;
  for (const auto& [v, d] : pairs) forward.push_back(a.next_hop(v, d));
  for (std::size_t i = pairs.size(); i-- > 0;) {
    const auto [v, d] = pairs[i];
    const Hop& h = b.next_hop(v, d);
    EXPECT_EQ(h, forward[i]) << v << "->" << d;
    std::vector<std::uint32_t> closer;
    const auto& ports = a.ports(v);
    for (std::uint32_t k = 0; k < ports.size(); ++k)
      if (a.distance(ports[k].next_node, d) == a.distance(v, d) - 1) closer.push_back(k);
    ASSERT_FALSE(closer.empty()) << v << "->" << d;
    EXPECT_EQ(h, ports[closer[(v + static_cast<std::size_t>(d)) % closer.size()]]) << v << "->" << d;
  }
}

TEST(FabricGraphPod, PortsSortedByPort) {
  FabricSpec f = pod(3, 2);
  std::swap(f.links[0], f.links[1]);  // declaration order no longer port order
  FabricGraph g(f);
  const auto& p = g.ports(0);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].port, 0u);
  EXPECT_EQ(p[1].port, 1u);
  EXPECT_EQ(g.ports(3).size(), 3u);  // sw0: one port per accelerator
}

TEST(FabricGraphPod, DefaultRanksFollowDeclarationOrder) {
  FabricSpec f = pod(3, 1);
  for (auto& n : f.nodes) n.rank = -1;
  std::swap(f.nodes[0], f.nodes[3]);  // switch first: accelerators are nodes 1, 2, 3
  // fix link endpoints after the swap (0 <-> 3)
  for (auto& l : f.links) {
    if (l.a == 0)
      l.a = 3;
    else if (l.a == 3)
      l.a = 0;
    if (l.b == 0)
      l.b = 3;
    else if (l.b == 3)
      l.b = 0;
  }
  FabricGraph g(f);
  EXPECT_EQ(g.accelerators(), (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(g.rank_of(0), -1);
  EXPECT_EQ(g.rank_of(2), 1);
  EXPECT_EQ(g.hops(0, 2), 2);
}

// A switch with no link at all is an input error (a node left out of `links`);
// switches linked only to each other, apart from every accelerator, have no route.
TEST(FabricGraphPod, IsolatedSwitchesHaveNoRoute) {
  FabricSpec lone = pod(2, 1);
  lone.nodes.push_back(sw("lonely"));
  lone.nodes.back().src = {"f.yaml:9:10", "nodes[3].id"};
  EXPECT_EQ(expect_error(lone),
            "f.yaml:9:10: key 'nodes[3].id': ualink-switch 'lonely' has no link (link it or remove it)");
  FabricSpec f = pod(2, 1);
  f.nodes.push_back(sw("lonely"));
  f.nodes.push_back(sw("lonely2"));
  add_link(f, 3, 0, 4, 0);
  FabricGraph g(f);
  EXPECT_EQ(g.distance(3, 0), -1);
  std::string msg = error_of([&] { g.next_hop(3, 0); });
  EXPECT_NE(msg.find("no route"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes[lonely]"), std::string::npos) << msg;
}

TEST(FabricGraphPod, CopiesShareTables) {
  FabricGraph g(pod(4, 2));
  FabricGraph c = g;
  EXPECT_EQ(&g.next_hop(4, 1), &c.next_hop(4, 1));
  EXPECT_EQ(c.hops(0, 3), 2);
}

// ---------------------------------------------------------------------------
// Validation errors

TEST(FabricGraphErrors, DuplicateNodeId) {
  FabricSpec f = ring(4);
  f.nodes[2].id = "acc1";
  f.nodes[2].src = {"dup.yaml:7:9", "nodes[2].id"};
  std::string msg = expect_error(f);
  EXPECT_EQ(msg.rfind("dup.yaml:7:9: key 'nodes[2].id': ", 0), 0u) << msg;
  EXPECT_NE(msg.find("duplicate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'acc1'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes[acc1]"), std::string::npos) << msg;  // first declaration
}

TEST(FabricGraphErrors, DuplicateRank) {
  FabricSpec f = ring(4);
  f.nodes[3].rank = 0;
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("duplicate rank 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes[acc3]"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, RankOutOfRange) {
  FabricSpec f = ring(4);
  f.nodes[1].rank = 4;
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("rank 4 out of range"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, DanglingEndpoint) {
  FabricSpec f = ring(4);
  f.links[2].b = 11;
  std::string msg = expect_error(f);
  EXPECT_EQ(msg.rfind("test.yaml:202:5: key 'links[2]': ", 0), 0u) << msg;
  EXPECT_NE(msg.find("dangling"), std::string::npos) << msg;
  EXPECT_NE(msg.find("11"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, PortUsedTwiceNamesBothLinks) {
  FabricSpec f = pod(4, 2);
  add_link(f, 0, 1, 2, 7);  // acc0 port 1 is already link 1's; link 8
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("used twice"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test.yaml:201:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'acc0'"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, SelfLink) {
  FabricSpec f = ring(4);
  add_link(f, 2, 5, 2, 6);
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("itself"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[4]"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, AcceleratorWithoutLink) {
  FabricSpec f = pod(3, 2);
  f.nodes.insert(f.nodes.begin() + 3, acc("acc3", 3));  // node 3, no link
  for (auto& l : f.links) {
    if (l.b >= 3) ++l.b;  // switches moved to nodes 4, 5
  }
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("has no link"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes[acc3]"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, UnreachableAccelerators) {
  // Two disjoint 2-rings: {acc0, acc1} and {acc2, acc3}.
  FabricSpec f;
  for (int i = 0; i < 4; ++i) f.nodes.push_back(acc("acc" + std::to_string(i), i));
  add_link(f, 0, 0, 1, 0);
  add_link(f, 2, 0, 3, 0);
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("unreachable"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'acc0'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'acc2'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nodes[acc2]"), std::string::npos) << msg;
}

TEST(FabricGraphErrors, SwitchPortBeyondDeclaredPorts) {
  FabricSpec f = pod(4, 2);
  f.nodes[5].ports = 3;  // sw1 declares 3 ports, acc3 uses port 3 (link 7)
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[7]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'sw1'"), std::string::npos) << msg;
  f.nodes[5].ports = 4;  // exactly enough
  EXPECT_NO_THROW(FabricGraph{f});
  f.nodes[5].ports = 0;  // as many as attached
  EXPECT_NO_THROW(FabricGraph{f});
}

TEST(FabricGraphErrors, NodePortBeyondDeclaredPorts) {
  FabricSpec f = ring(4);
  f.nodes[1].ports = 1;  // acc1 uses port 1 (link 1)
  std::string msg = expect_error(f);
  EXPECT_NE(msg.find("out of range"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[1]"), std::string::npos) << msg;
}

// ---------------------------------------------------------------------------
// DOT and summary

TEST(FabricGraphOutput, Dot) {
  FabricGraph g(pod(4, 2));
  std::string dot = g.to_dot();
  EXPECT_EQ(dot.rfind("graph", 0), 0u) << dot;
  EXPECT_NE(dot.find("--"), std::string::npos);
  for (std::size_t v = 0; v < g.num_nodes(); ++v) EXPECT_NE(dot.find(g.node_id(v)), std::string::npos) << g.node_id(v);
  EXPECT_NE(dot.find("label=\"acc2\\naccelerator\", shape=ellipse"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"sw1\\nualink-switch\", shape=box"), std::string::npos) << dot;
  EXPECT_NE(dot.find("3--5 [label=\"1-3\"]"), std::string::npos) << dot;  // acc3 port 1 - sw1 port 3
  EXPECT_EQ(dot, FabricGraph(pod(4, 2)).to_dot());                        // deterministic
}

TEST(FabricGraphOutput, DotQuotesIds) {
  FabricSpec f = ring(2);
  f.nodes[0].id = "a\"b";
  std::string dot = FabricGraph(f).to_dot();
  EXPECT_NE(dot.find("label=\"a\\\"b\\naccelerator\""), std::string::npos) << dot;
}

TEST(FabricGraphOutput, Summary) {
  FabricGraph g(pod(4, 2));
  std::string s = g.summary();
  EXPECT_NE(s.find("fabric 'pod' (generator switched-pod)"), std::string::npos) << s;
  EXPECT_NE(s.find("nodes: 6 (accelerator: 4, ualink-switch: 2)"), std::string::npos) << s;
  EXPECT_NE(s.find("links: 8"), std::string::npos) << s;
  EXPECT_NE(s.find("2: 12"), std::string::npos) << s;
  EXPECT_NE(s.find("diameter: 2 hops"), std::string::npos) << s;
  std::string r = FabricGraph(ring(8)).summary();
  EXPECT_NE(r.find("1: 16, 2: 16, 3: 16, 4: 8"), std::string::npos) << r;
}

// ---------------------------------------------------------------------------
// Scale: 1024 accelerators x 8 switches (1032 nodes, 8192 links)

TEST(FabricGraphScale, Pod1024x8) {
  FabricSpec f = pod(1024, 8);
  auto t0 = std::chrono::steady_clock::now();
  FabricGraph g(f);
  auto t1 = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("[ info     ] 1024x8 pod (%zu nodes, %zu links): built in %.1f ms, peak RSS %.1f MB\n", g.num_nodes(),
              g.num_links(), ms, ru.ru_maxrss / 1024.0);
  RecordProperty("build_ms", std::to_string(ms));
  EXPECT_EQ(g.hops(0, 1023), 2);
  EXPECT_EQ(g.diameter(), 2);
  EXPECT_EQ(g.path_classes(), (std::map<int, std::size_t>{{2, 1024u * 1023u}}));
  EXPECT_EQ(g.first_hops(5, 700).size(), 8u);
  EXPECT_EQ(g.next_hop(1024 + 3, 700).port, 700u);
}

}  // namespace
