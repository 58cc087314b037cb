// Collectives on error-free fabrics against their alpha-beta times computed
// from the fabric's own parameters (collectives.md §3), and numerical
// correctness of every shipped algorithm, including the GPU transports of
// host-bridge.md §4 and send/recv. One elaboration per test process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "models/link/core/types.h"
#include "platform/config/yaml_config.h"
#include "platform/fabric/fabric_config.h"
#include "platform/sim/fabric_run.h"
#include "sw/collectives.h"

using namespace fabricsim;

namespace {

fabric::FabricRunConfig load(const std::string& file, std::vector<std::string> sets) {
  // Error-free channel, fixed profile: the cost model's beta is exact.
  sets.insert(sets.begin(), {"defaults.link.channel.error_good=0", "defaults.link.channel.error_bad=0",
                             "defaults.link.policy.name=fixed-strong"});
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/" + file, sets);
  return fabric::parse_fabric(config::root_section(doc));
}

// Alpha-beta parameters of a fabric whose paths all have the same hop count.
struct Cost {
  double alpha_ns;  // first-flit path latency beyond its own serialization
  double flit_ns;   // wire time of one flit (the bottleneck serializer)
  double flit_bytes;
  double gamma_ns_per_byte;
  // Time of one message of n bytes: alpha + ceil(n / flit) x flit time.
  double msg(double n) const { return alpha_ns + std::ceil(n / flit_bytes) * flit_ns; }
  double red(double n) const { return n * gamma_ns_per_byte; }
};

Cost cost_of(const fabric::FabricRunConfig& c, int hops) {
  const auto& l = c.default_link;
  const auto& strong = l.fec_menu.back();
  Cost k;
  k.flit_bytes = l.flit_bytes;
  k.flit_ns = link::wire_time_ps(l.flit_bytes * (1.0 + strong.overhead), l.forward_rate_bps) / 1000.0;
  const double per_hop = (l.propagation_ps + strong.decode_delay_ps) / 1000.0;
  const double sw_ns = c.fabric.nodes.back().sw.latency_ps / 1000.0;
  // Store-and-forward of one flit per extra hop, plus the switch latency.
  k.alpha_ns = hops * per_hop + (hops - 1) * (k.flit_ns + sw_ns);
  k.gamma_ns_per_byte = 1e9 / c.fabric.nodes.front().accel.reduce_rate_bytes_per_s;
  return k;
}

// Single-switch pod of 8: every pair is 2 hops, every accelerator one port.
fabric::FabricRunConfig star(const std::string& op, const std::string& alg, const std::string& size) {
  return load("ualink-pod-64.yaml", {"fabric.accelerators=8", "fabric.switches=1", "workload.collective=" + op,
                                     "workload.algorithm=" + alg, "workload.size=" + size});
}

void expect_near_model(const fabric::FabricRunConfig& c, double model_ns) {
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  const double sim_ns = r.row.time_us * 1000.0;
  std::printf("[ alpha-beta ] simulated %.1f ns, model %.1f ns, ratio %.4f\n", sim_ns, model_ns, sim_ns / model_ns);
  EXPECT_NEAR(sim_ns / model_ns, 1.0, 0.05) << "simulated " << sim_ns << " ns, alpha-beta " << model_ns << " ns";
  EXPECT_EQ(r.replayed_flits, 0u);  // error-free
}

constexpr double kN = 8;
constexpr double MiB = 1048576.0;

}  // namespace

TEST(AlphaBeta, RingAllReduceOnRing) {
  const auto c = load("ring8.yaml", {"workload.algorithm=ring", "workload.size=8MiB"});
  const Cost k = cost_of(c, 1);
  const double n = 8 * MiB;
  expect_near_model(c, 2 * (kN - 1) * k.msg(n / kN) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, RingSyncAllReduceOnRing) {
  const auto c = load("ring8.yaml", {"workload.algorithm=ring-sync", "workload.size=1MiB"});
  const Cost k = cost_of(c, 1);
  const double n = 1 * MiB;
  expect_near_model(c, 2 * (kN - 1) * k.msg(n / kN) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, RingAllReduceOnStar) {
  const auto c = star("allreduce", "ring", "8MiB");
  const Cost k = cost_of(c, 2);
  const double n = 8 * MiB;
  expect_near_model(c, 2 * (kN - 1) * k.msg(n / kN) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, OneShotPushAllReduceOnStar) {
  // Every rank's egress (and ingress) carries (N-1) full vectors.
  const auto c = star("allreduce", "oneshot-push", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, k.alpha_ns + (kN - 1) * (k.msg(n) - k.alpha_ns) + (kN - 1) * k.red(n));
}

TEST(AlphaBeta, OneShotPullAllReduceOnStar) {
  // A one-flit request first (one message time), then (N-1) vectors per ingress.
  const auto c = star("allreduce", "oneshot-pull", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, k.msg(1) + k.alpha_ns + (kN - 1) * (k.msg(n) - k.alpha_ns) + (kN - 1) * k.red(n));
}

TEST(AlphaBeta, PhasedPushAllReduceOnStar) {
  const auto c = star("allreduce", "phased-push", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, (kN - 1) * k.msg(n) + (kN - 1) * k.red(n));
}

TEST(AlphaBeta, TreeAllReduceOnStar) {
  // Binomial reduce then broadcast: log2 N rounds each way, one message per
  // port per round (the single-port optimum), reductions on the way up.
  const auto c = star("allreduce", "tree", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB, L = 3;
  expect_near_model(c, 2 * L * k.msg(n) + L * k.red(n));
}

TEST(AlphaBeta, RingReduceScatterOnStar) {
  const auto c = star("reduce_scatter", "ring", "8MiB");
  const Cost k = cost_of(c, 2);
  const double n = 8 * MiB;
  expect_near_model(c, (kN - 1) * (k.msg(n / kN) + k.red(n / kN)));
}

TEST(AlphaBeta, DirectReduceScatterOnStar) {
  const auto c = star("reduce_scatter", "direct", "8MiB");
  const Cost k = cost_of(c, 2);
  const double n = 8 * MiB;
  expect_near_model(c, k.alpha_ns + (kN - 1) * (k.msg(n / kN) - k.alpha_ns) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, PhasedReduceScatterOnStar) {
  const auto c = star("reduce_scatter", "phased", "8MiB");
  const Cost k = cost_of(c, 2);
  const double n = 8 * MiB;
  expect_near_model(c, (kN - 1) * k.msg(n / kN) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, RingAllGatherOnStar) {
  const auto c = star("allgather", "ring", "8MiB");
  const Cost k = cost_of(c, 2);
  expect_near_model(c, (kN - 1) * k.msg(8 * MiB / kN));
}

TEST(AlphaBeta, DirectAllGatherOnStar) {
  const auto c = star("allgather", "direct", "8MiB");
  const Cost k = cost_of(c, 2);
  expect_near_model(c, k.alpha_ns + (kN - 1) * (k.msg(8 * MiB / kN) - k.alpha_ns));
}

TEST(AlphaBeta, PhasedAllGatherOnStar) {
  const auto c = star("allgather", "phased", "8MiB");
  const Cost k = cost_of(c, 2);
  expect_near_model(c, (kN - 1) * k.msg(8 * MiB / kN));
}

// Correctness of the remaining operations (their data movement is checked
// element by element against the expected float32 values).
TEST(Collectives, AllToAllDirectAndPhasedAreCorrect) {
  // One elaboration per process: the phased variant runs in the next test.
  const auto r = sim::run_fabric(star("alltoall", "direct", "64KiB"));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
}
TEST(Collectives, AllToAllPhasedIsCorrect) {
  const auto r = sim::run_fabric(star("alltoall", "phased", "64KiB"));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
}
TEST(Collectives, BroadcastTreeIsCorrect) {
  auto c = star("broadcast", "tree", "64KiB");
  c.workload.collective.root = 3;
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
}
TEST(Collectives, BroadcastRingPipelineIsCorrect) {
  const auto r = sim::run_fabric(load("ring8.yaml", {"workload.collective=broadcast", "workload.algorithm=ring",
                                                     "workload.size=64KiB", "workload.root=5"}));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
}
// With the burst channel on, replays change the timing but never the bytes.
TEST(Collectives, RingAllReduceIsCorrectUnderReplay) {
  const auto doc = config::load_with_overrides(std::string(FABRICSIM_SOURCE_DIR) + "/topologies/ring16.yaml",
                                               {"workload.size=1MiB"});
  const auto r = sim::run_fabric(fabric::parse_fabric(config::root_section(doc)));
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  EXPECT_GT(r.replayed_flits, 0u);
  EXPECT_EQ(r.terminal_failures, 0u);
}

// ---- GPU transports (host-bridge.md §4) -------------------------------------------
namespace {

// Four ranks on one switch, AllReduce `alg` on real data.
fabric::FabricRunConfig star4(const std::string& alg, const std::string& size) {
  return load("ualink-pod-64.yaml", {"fabric.accelerators=4", "fabric.switches=1", "workload.collective=allreduce",
                                     "workload.algorithm=" + alg, "workload.size=" + size});
}

// Bulk modes: 64 KiB in 12 KiB chunks = 5 full chunks and a 4 KiB one.
fabric::FabricRunConfig star4_bulk(const std::string& alg) {
  auto c = star4(alg, "64KiB");
  c.workload.collective.chunk_bytes = 12 << 10;
  return c;
}

// The YAML workload has no sendrecv yet: set the operation on the spec.
fabric::FabricRunConfig with_sendrecv(fabric::FabricRunConfig c, const std::string& alg) {
  c.workload.collective.op = sw::Op::sendrecv;
  c.workload.collective.algorithm = alg;
  return c;
}

void expect_correct(const fabric::FabricRunConfig& c) {
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  EXPECT_GT(r.row.time_us, 0.0);
}

}  // namespace

// Every element of every rank's output equals the exact float32 sum.
TEST(Transports, PullIsExact) { expect_correct(star4("pull", "64KiB")); }
TEST(Transports, BulkPullIsExact) { expect_correct(star4_bulk("bulk_pull")); }
TEST(Transports, FullIsExact) { expect_correct(star4("full", "64KiB")); }
TEST(Transports, PayloadRsagIsExact) { expect_correct(star4("payload_rsag", "64KiB")); }
TEST(Transports, BulkPushIsExact) { expect_correct(star4_bulk("bulk_push")); }
TEST(Transports, FullPhasedIsExact) { expect_correct(star4("full_phased", "64KiB")); }
TEST(Transports, PayloadRsagPhasedIsExact) { expect_correct(star4("payload_rsag_phased", "64KiB")); }
TEST(Transports, BulkPushPhasedIsExact) { expect_correct(star4_bulk("bulk_push_phased")); }
TEST(Transports, WriteRingIsExact) { expect_correct(star4("write_ring", "64KiB")); }
TEST(Transports, NcclLlIsExact) { expect_correct(star4("nccl_ll", "64KiB")); }
TEST(Transports, NcclSimpleReadIsExact) { expect_correct(star4("nccl_simple_read", "64KiB")); }
TEST(Transports, SendRecvWriteIsExact) { expect_correct(with_sendrecv(star4("ring", "64KiB"), "write")); }
TEST(Transports, SendRecvReadIsExact) { expect_correct(with_sendrecv(star4("ring", "64KiB"), "read")); }

TEST(Transports, NcclShmNeedsHostMemory) {
  // A switched pod has no host memory: the configuration is rejected before elaboration.
  try {
    star4("nccl_shm", "64KiB");
    ADD_FAILURE() << "nccl_shm on a switched pod was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("host memory"), std::string::npos) << e.what();
  }
}

// Timing on the 8-rank star (the alpha-beta fixture above).
TEST(AlphaBeta, PayloadRsagAllReduceOnStar) {
  // Direct reduce-scatter then direct all-gather: every egress carries
  // 2 (N-1) chunks of n / N, against (N-1) whole vectors for full.
  const auto c = star("allreduce", "payload_rsag", "8MiB");
  const Cost k = cost_of(c, 2);
  const double n = 8 * MiB;
  const double phase = k.alpha_ns + (kN - 1) * (k.msg(n / kN) - k.alpha_ns);
  const double full = k.alpha_ns + (kN - 1) * (k.msg(n) - k.alpha_ns) + (kN - 1) * k.red(n);
  const double model = 2 * phase + (kN - 1) * k.red(n / kN);
  const auto r = sim::run_fabric(c);  // one elaboration per process: check both on this run
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_TRUE(r.row.correct);
  const double sim_ns = r.row.time_us * 1000.0;
  EXPECT_NEAR(sim_ns / model, 1.0, 0.05) << "simulated " << sim_ns << " ns, alpha-beta " << model << " ns";
  EXPECT_LT(sim_ns, 0.5 * full) << "payload_rsag should beat the one-shot push (" << full << " ns) by ~N/2 at 8 MiB";
}

TEST(AlphaBeta, FullPhasedAllReduceOnStar) {
  // One destination per phase; the barriers cost nothing on a contention-free star.
  const auto c = star("allreduce", "full_phased", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, (kN - 1) * k.msg(n) + (kN - 1) * k.red(n));
}

TEST(AlphaBeta, NcclLlAllReduceOnStar) {
  // The ring with every chunk doubled on the wire (LL lines: 4 B data + 4 B flag).
  const auto c = star("allreduce", "nccl_ll", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, 2 * (kN - 1) * k.msg(2 * n / kN) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, NcclLlTimingOnlyKeepsTheTiming) {
  auto c = star("allreduce", "nccl_ll", "1MiB");
  c.workload.data = false;
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  const auto r = sim::run_fabric(c);
  ASSERT_TRUE(r.ok) << r.diagnosis;
  EXPECT_FALSE(r.row.correct);  // nothing to check: no bytes moved
  const double model = 2 * (kN - 1) * k.msg(2 * n / kN) + (kN - 1) * k.red(n / kN);
  EXPECT_NEAR(r.row.time_us * 1000.0 / model, 1.0, 0.05);
}

TEST(AlphaBeta, NcclSimpleReadAllReduceOnStar) {
  // Per ring step: the predecessor's 8-byte ready signal, a one-flit read
  // request, the chunk coming back; reductions in the reduce-scatter steps.
  const auto c = star("allreduce", "nccl_simple_read", "1MiB");
  const Cost k = cost_of(c, 2);
  const double n = 1 * MiB;
  expect_near_model(c, 2 * (kN - 1) * (k.msg(8) + k.msg(1) + k.msg(n / kN)) + (kN - 1) * k.red(n / kN));
}

TEST(AlphaBeta, BulkPushAllReduceOnStar) {
  // 8 chunks of 128 KiB: per chunk a fan-out of (N-1) chunk messages, the
  // next chunk posted once the last arrival landed; reductions overlap the
  // next chunk's pushes, only the last chunk's are exposed.
  auto c = star("allreduce", "bulk_push", "1MiB");
  c.workload.collective.chunk_bytes = 128 << 10;
  const Cost k = cost_of(c, 2);
  const double B = 128 * 1024.0, M = 8;
  expect_near_model(c, M * (k.alpha_ns + (kN - 1) * (k.msg(B) - k.alpha_ns)) + (kN - 1) * k.red(B));
}

TEST(AlphaBeta, BulkPullAllReduceOnStar) {
  // As bulk_push, each chunk preceded by its one-flit read requests.
  auto c = star("allreduce", "bulk_pull", "1MiB");
  c.workload.collective.chunk_bytes = 128 << 10;
  const Cost k = cost_of(c, 2);
  const double B = 128 * 1024.0, M = 8;
  expect_near_model(c, M * (k.msg(1) + k.alpha_ns + (kN - 1) * (k.msg(B) - k.alpha_ns)) + (kN - 1) * k.red(B));
}

TEST(AlphaBeta, SendRecvWriteOnStar) {
  const auto c = with_sendrecv(star("allreduce", "ring", "1MiB"), "write");
  const Cost k = cost_of(c, 2);
  expect_near_model(c, k.msg(1 * MiB));
}

TEST(AlphaBeta, SendRecvReadOnStar) {
  const auto c = with_sendrecv(star("allreduce", "ring", "1MiB"), "read");
  const Cost k = cost_of(c, 2);
  expect_near_model(c, k.msg(1) + k.msg(1 * MiB));
}
