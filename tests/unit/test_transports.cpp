// Unit tests for sw/transports.{h,cpp} (the transport table of
// host-bridge.md §4) and, without SystemC, for the flag protocols of every
// collective in sw/collectives.{h,cpp}: a fake fabric (FakeWorld) runs one
// thread per rank, one at a time (a baton), delivers posted operations after
// a random delay and in a random order across (requester, peer) pairs (FIFO
// within a pair, as the fabric model), and samples read data at delivery.
// Each run is deterministic for its seed.

#include "sw/transports.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "sw/collectives.h"
#include "tests/unit/fake_world.h"

namespace {

using fabricsim::models::accelerator_api;
namespace sw = fabricsim::sw;

// ---- transport table -----------------------------------------------------------

TEST(TransportTable, NamesAreTheReportTableInOrder) {
  const std::vector<std::string> want{"pull",
                                      "bulk_pull",
                                      "full",
                                      "payload_rsag",
                                      "bulk_push",
                                      "full_phased",
                                      "payload_rsag_phased",
                                      "bulk_push_phased",
                                      "write_ring",
                                      "nccl_ll",
                                      "nccl_shm",
                                      "nccl_simple_read",
                                      "read_ring",
                                      "write_all"};
  EXPECT_EQ(sw::transport_names(), want);
  // the AllReduce ones: all but the two probes, in the same order
  EXPECT_EQ(sw::allreduce_transport_names(), std::vector<std::string>(want.begin(), want.begin() + 12));
}

TEST(TransportTable, AllReduceTransportsAreAllReduceAlgorithms) {
  const auto& algs = sw::algorithms(sw::Op::allreduce);
  for (const auto& name : sw::transport_names()) {
    if (name == "read_ring" || name == "write_all") continue;
    SCOPED_TRACE(name);
    const auto s = sw::transport_spec(name, 80 << 10, 8);
    EXPECT_EQ(s.op, sw::Op::allreduce);
    EXPECT_EQ(s.algorithm, name);
    EXPECT_EQ(s.bytes, 80u << 10);
    EXPECT_NE(std::find(algs.begin(), algs.end(), name), algs.end());
  }
}

TEST(TransportTable, ProbesMapToSendRecvReadAndDirectAllGather) {
  const auto rd = sw::transport_spec("read_ring", 80 << 10, 8);
  EXPECT_EQ(rd.op, sw::Op::sendrecv);
  EXPECT_EQ(rd.algorithm, "read");
  EXPECT_EQ(rd.bytes, 80u << 10);
  // write_all: each rank writes its 80 KiB buffer to every peer, i.e. an
  // AllGather whose nccl-tests size is the whole gathered vector.
  const auto wa = sw::transport_spec("write_all", 80 << 10, 8);
  EXPECT_EQ(wa.op, sw::Op::allgather);
  EXPECT_EQ(wa.algorithm, "direct");
  EXPECT_EQ(wa.bytes, 8u * (80u << 10));
  EXPECT_EQ(sw::layout(wa, 8).in_bytes, 80u << 10);
  EXPECT_EQ(sw::transport_spec("write_all", 4096, 3).bytes, 3u * 4096);
}

TEST(TransportTable, UnknownNameThrowsListingTheValidOnes) {
  for (auto call : std::vector<std::function<void()>>{
           [] { sw::transport_spec("ring", 4096, 4); },  // an algorithm, not a transport
           [] { sw::transport_reads_peers("nccl_p2p"); }, [] { sw::transport_fans_out(""); }}) {
    try {
      call();
      ADD_FAILURE() << "no exception";
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("unknown transport"), std::string::npos) << m;
      EXPECT_NE(m.find("bulk_push_phased"), std::string::npos) << m;
      EXPECT_NE(m.find("write_all"), std::string::npos) << m;
    }
  }
}

TEST(TransportTable, BadSizesAndRankCountsThrow) {
  EXPECT_THROW(sw::transport_spec("pull", 4100, 8), std::invalid_argument);  // not a multiple of 4 x 8
  EXPECT_THROW(sw::transport_spec("pull", 0, 8), std::invalid_argument);
  EXPECT_THROW(sw::transport_spec("write_all", 4096, 1), std::invalid_argument);
  EXPECT_NO_THROW(sw::transport_spec("write_all", 4, 8));  // allgather: T = 32 B, 4 B per rank
}

TEST(TransportTable, TrafficClasses) {
  std::vector<std::string> reads, fans;
  for (const auto& n : sw::transport_names()) {
    if (sw::transport_reads_peers(n)) reads.push_back(n);
    if (sw::transport_fans_out(n)) fans.push_back(n);
  }
  EXPECT_EQ(reads, (std::vector<std::string>{"pull", "bulk_pull", "nccl_simple_read", "read_ring"}));
  EXPECT_EQ(fans, (std::vector<std::string>{"full", "payload_rsag", "bulk_push", "write_all"}));
}

TEST(CollectiveSpec, SendRecvExpectedValueIsThePredecessorsInput) {
  sw::CollectiveSpec s;
  s.op = sw::Op::sendrecv;
  s.algorithm = "write";
  s.bytes = 64;
  EXPECT_EQ(sw::expected_value(s, 4, 0, 5), sw::input_value(s.op, 3, 5));
  EXPECT_EQ(sw::expected_value(s, 4, 2, 7), sw::input_value(s.op, 1, 7));
  EXPECT_EQ(sw::busbw_factor(sw::Op::sendrecv, 4), 1.0);
  EXPECT_EQ(sw::parse_op("sendrecv"), sw::Op::sendrecv);
  EXPECT_EQ(sw::to_string(sw::Op::sendrecv), "sendrecv");
}

TEST(CollectiveSpec, BulkChunkBytesMustBeWholeFloats) {
  sw::CollectiveSpec s;
  s.algorithm = "bulk_push";
  s.bytes = 1024;
  s.chunk_bytes = 6;
  EXPECT_THROW(sw::layout(s, 4), std::invalid_argument);
  s.chunk_bytes = 0;
  EXPECT_THROW(sw::layout(s, 4), std::invalid_argument);
  s.algorithm = "ring";  // ignored by the other algorithms
  EXPECT_NO_THROW(sw::layout(s, 4));
}

TEST(CollectiveSpec, HostBytesOnlyForNcclShm) {
  sw::CollectiveSpec s;
  s.bytes = 8 << 20;
  s.algorithm = "nccl_shm";
  EXPECT_EQ(sw::host_bytes(s, 8), 16u << 20);  // 8 ranks x 2 slots of T / 8
  s.algorithm = "nccl_ll";
  EXPECT_EQ(sw::host_bytes(s, 8), 0u);
}

// ---- fake fabric: tests/unit/fake_world.h ----------------------------------------

using fabricsim_test::FakeWorld;

// The platform's rank program (platform/sim/fabric_run.cpp): per iteration
// fill the input, barrier, reset flags, barrier, run. Two iterations catch a
// flag or write that leaks from one collective into the next.
std::string run_and_check(const sw::CollectiveSpec& spec, int N, bool host, std::uint32_t seed) {
  const sw::Layout L = sw::layout(spec, N);
  FakeWorld w(N, L.total, host ? std::max<std::uint64_t>(sw::host_bytes(spec, N), 64) : 0, seed);
  const std::string err = w.run([&](accelerator_api& a) {
    for (int it = 0; it < 2; ++it) {
      for (std::uint64_t i = 0; i < L.in_bytes / 4; ++i) {
        const float v = sw::input_value(spec.op, a.rank(), i);
        std::memcpy(a.memory() + L.in + 4 * i, &v, 4);
      }
      a.barrier();
      a.reset_flags();
      a.barrier();
      sw::run_collective(a, spec);
    }
  });
  if (!err.empty()) return err;
  for (int r = 0; r < N; ++r)
    for (std::uint64_t i = 0; i < L.out_bytes / 4; ++i) {
      float got;
      std::memcpy(&got, w.memory(r) + L.out + 4 * i, 4);
      const float want = sw::expected_value(spec, N, r, i);
      if (got != want)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": " + std::to_string(got) +
               ", expected " + std::to_string(want);
    }
  return "";
}

TEST(CollectiveProtocols, EveryAlgorithmIsExactUnderRandomDelivery) {
  constexpr std::uint32_t kSeeds = 8;
  const std::vector<sw::Op> ops{sw::Op::allreduce, sw::Op::reduce_scatter, sw::Op::allgather,
                                sw::Op::alltoall,  sw::Op::broadcast,      sw::Op::sendrecv};
  int runs = 0;
  for (int N : {2, 3, 4, 5}) {
    for (auto op : ops)
      for (const auto& alg : sw::algorithms(op)) {
        if (alg == "tree" && (N & (N - 1)) != 0) continue;
        sw::CollectiveSpec s;
        s.op = op;
        s.algorithm = alg;
        s.bytes = 4ull * N * 7;  // 7 floats per chunk
        s.chunk_bytes = 12;      // bulk: 3 floats, so several chunks and a shorter last one
        s.root = N - 1;
        s.pipeline_chunks = 3;
        for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
          SCOPED_TRACE(sw::to_string(op) + " " + alg + " N=" + std::to_string(N) + " seed=" + std::to_string(seed));
          EXPECT_EQ(run_and_check(s, N, /*host=*/true, seed), "");
          ++runs;
        }
      }
  }
  EXPECT_GT(runs, 800);
}

// The transports whose flag protocols have buffer reuse or chunk pipelining,
// under many more schedules (e.g. bulk_push with two staging sets instead of
// three fails in about 2 % of schedules).
TEST(CollectiveProtocols, TransportsSurviveManySchedules) {
  for (const char* alg : {"bulk_pull", "bulk_push", "bulk_push_phased", "nccl_ll", "nccl_simple_read", "nccl_shm"})
    for (int N : {2, 3, 4})
      for (std::uint32_t seed = 100; seed < 160; ++seed) {
        sw::CollectiveSpec s;
        s.algorithm = alg;
        s.bytes = 4ull * N * 7;
        s.chunk_bytes = 12;
        SCOPED_TRACE(std::string(alg) + " N=" + std::to_string(N) + " seed=" + std::to_string(seed));
        ASSERT_EQ(run_and_check(s, N, /*host=*/true, seed), "");
      }
}

TEST(CollectiveProtocols, BulkChunkLargerThanTheVectorIsOneChunk) {
  for (const char* alg : {"bulk_pull", "bulk_push", "bulk_push_phased"}) {
    sw::CollectiveSpec s;
    s.algorithm = alg;
    s.bytes = 4 * 4 * 5;
    s.chunk_bytes = 1 << 20;
    SCOPED_TRACE(alg);
    EXPECT_EQ(sw::layout(s, 4).total, 5 * s.bytes);  // in + out + (N - 1) x T: one staging set
    EXPECT_EQ(run_and_check(s, 4, false, 7), "");
  }
}

TEST(CollectiveProtocols, NcclShmWithoutHostMemoryThrows) {
  sw::CollectiveSpec s;
  s.algorithm = "nccl_shm";
  s.bytes = 64;
  const std::string err = run_and_check(s, 4, /*host=*/false, 1);
  EXPECT_NE(err.find("nccl_shm needs host memory"), std::string::npos) << err;
}

TEST(CollectiveProtocols, TheFakeFabricReportsADeadlock) {
  FakeWorld w(3, 64, 0, 1);
  const std::string err = w.run([](accelerator_api& a) {
    if (a.rank() == 0) a.wait_flag(0, 1);  // nobody writes
  });
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
}

}  // namespace
