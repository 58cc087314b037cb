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

namespace {

using fabricsim::models::accelerator_api;
namespace sw = fabricsim::sw;

// ---- transport table -----------------------------------------------------------

TEST(TransportTable, NamesAreTheReportTableInOrder) {
  const std::vector<std::string> want{"pull",        "bulk_pull",           "full",             "payload_rsag",
                                      "bulk_push",   "full_phased",         "payload_rsag_phased",
                                      "bulk_push_phased",                   "write_ring",       "nccl_ll",
                                      "nccl_shm",    "nccl_simple_read",    "read_ring",        "write_all"};
  EXPECT_EQ(sw::transport_names(), want);
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

// ---- fake fabric ------------------------------------------------------------------

struct Aborted {};  // unwinds a rank's program when the run has failed

class FakeWorld {
 public:
  FakeWorld(int ranks, std::uint64_t memory_bytes, std::uint64_t host_bytes, std::uint32_t seed)
      : n_(ranks), rng_(seed) {
    mem_.assign(ranks, std::vector<unsigned char>(memory_bytes, 0));
    if (host_bytes > 0) {
      host_ = ranks;
      mem_.emplace_back(host_bytes, 0);
    }
    flags_.assign(ranks, std::vector<std::uint64_t>(kFlags, 0));
    open_.resize(ranks);
    waiting_.resize(ranks);
    finished_.assign(ranks, false);
  }

  /// Runs `program` on every rank; "" on success, else the first error.
  std::string run(const std::function<void(accelerator_api&)>& program);
  const unsigned char* memory(int r) const { return mem_[r].data(); }

 private:
  class Rank;
  struct Pending {
    int req, peer;
    bool read;
    std::uint64_t peer_addr, local_addr, bytes;
    int flag;
    std::vector<unsigned char> data;  // a write's bytes, captured at post
    std::uint64_t id;
  };
  static constexpr int kFlags = 64;

  using Lock = std::unique_lock<std::mutex>;
  bool runnable(int q) const { return !finished_[q] && (!waiting_[q] || waiting_[q]()); }
  std::vector<int> runnable_others(int r) const {
    std::vector<int> v;
    for (int q = 0; q < n_; ++q)
      if (q != r && runnable(q)) v.push_back(q);
    return v;
  }
  std::vector<std::size_t> eligible() const {  // oldest pending op of each (requester, peer) pair
    std::vector<std::size_t> v;
    std::set<std::pair<int, int>> seen;
    for (std::size_t i = 0; i < pending_.size(); ++i)
      if (seen.insert({pending_[i].req, pending_[i].peer}).second) v.push_back(i);
    return v;
  }
  void deliver(std::size_t i) {
    Pending p = std::move(pending_[i]);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    if (p.read) {
      std::memcpy(mem_[p.req].data() + p.local_addr, mem_[p.peer].data() + p.peer_addr, p.bytes);
    } else {
      std::memcpy(mem_[p.peer].data() + p.peer_addr, p.data.data(), p.bytes);
      if (p.flag >= 0 && p.peer != host_) ++flags_[p.peer][p.flag];
    }
    open_[p.req].erase(p.id);
  }
  void fail(const std::string& why) {
    if (!abort_) error_ = why;
    abort_ = true;
    cv_.notify_all();
  }
  void hand_to(int q, int r, Lock& lk) {
    turn_ = q;
    cv_.notify_all();
    cv_.wait(lk, [&] { return abort_ || turn_ == r; });
    if (abort_) throw Aborted{};
  }
  // Rank r holds the baton: deliver operations or pass the baton until `ready`.
  void block_until(int r, Lock& lk, std::function<bool()> ready) {
    waiting_[r] = ready;
    for (;;) {
      if (abort_) throw Aborted{};
      if (ready()) break;
      const auto ops = eligible();
      const auto others = runnable_others(r);
      if (ops.empty() && others.empty()) {
        fail("deadlock: rank " + std::to_string(r) + " waits and nothing can progress");
        throw Aborted{};
      }
      const bool deliver_op = others.empty() || (!ops.empty() && coin());
      if (deliver_op) deliver(ops[pick(ops.size())]);
      else hand_to(others[pick(others.size())], r, lk);
    }
    waiting_[r] = nullptr;
  }
  // With probability 1 / one_in, let another rank run (after a post, before a reduction).
  void maybe_yield(int r, Lock& lk, std::size_t one_in = 4) {
    const auto others = runnable_others(r);
    if (!others.empty() && pick(one_in) == 0) hand_to(others[pick(others.size())], r, lk);
  }
  void finish(int r, Lock& lk) {
    finished_[r] = true;
    waiting_[r] = nullptr;
    for (;;) {
      if (abort_) return;
      const auto others = runnable_others(r);
      if (!others.empty()) {
        turn_ = others[pick(others.size())];
        cv_.notify_all();
        return;
      }
      const auto ops = eligible();
      if (ops.empty()) {
        if (std::all_of(finished_.begin(), finished_.end(), [](bool b) { return b; })) return;
        fail("deadlock: every unfinished rank waits and no operation is in flight");
        return;
      }
      deliver(ops[pick(ops.size())]);
    }
    (void)lk;
  }
  bool coin() { return pick(2) == 0; }
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  int n_;
  int host_ = -1;
  std::vector<std::vector<unsigned char>> mem_;
  std::vector<std::vector<std::uint64_t>> flags_;
  std::vector<std::set<std::uint64_t>> open_;
  std::vector<Pending> pending_;
  std::vector<std::function<bool()>> waiting_;
  std::vector<bool> finished_;
  std::uint64_t next_op_ = 1;
  std::uint64_t barrier_arrived_ = 0, barrier_gen_ = 0;
  int turn_ = 0;
  bool abort_ = false;
  std::string error_;
  std::mt19937 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
};

class FakeWorld::Rank final : public accelerator_api {
 public:
  Rank(FakeWorld& w, int r) : w_(w), r_(r) {}
  int rank() const override { return r_; }
  int ranks() const override { return w_.n_; }
  unsigned char* memory() override { return w_.mem_[r_].data(); }
  bool functional() const override { return true; }
  std::uint64_t memory_bytes() const override { return w_.mem_[r_].size(); }
  int host_rank() const override { return w_.host_; }
  std::uint64_t post_write(int dst, std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t bytes,
                           int flag) override {
    return post(false, dst, dst_addr, src_addr, bytes, flag);
  }
  std::uint64_t post_read(int src, std::uint64_t src_addr, std::uint64_t dst_addr, std::uint64_t bytes) override {
    return post(true, src, src_addr, dst_addr, bytes, -1);
  }
  void wait(std::uint64_t op) override {
    Lock lk(w_.mu_);
    w_.block_until(r_, lk, [this, op] { return w_.open_[r_].count(op) == 0; });
  }
  void wait_all() override {
    Lock lk(w_.mu_);
    w_.block_until(r_, lk, [this] { return w_.open_[r_].empty(); });
  }
  void wait_flag(int f, std::uint64_t value) override {
    if (f < 0 || f >= kFlags) throw std::out_of_range("bad flag id");
    Lock lk(w_.mu_);
    w_.block_until(r_, lk, [this, f, value] { return w_.flags_[r_][f] >= value; });
  }
  std::uint64_t flag(int f) const override { return w_.flags_[r_].at(static_cast<std::size_t>(f)); }
  void reset_flags() override { std::fill(w_.flags_[r_].begin(), w_.flags_[r_].end(), 0); }
  void reduce_f32(std::uint64_t dst, std::uint64_t src, std::uint64_t count) override {
    const std::uint64_t M = memory_bytes();
    if (dst > M || count * 4 > M - dst || src > M || count * 4 > M - src)
      throw std::out_of_range("reduce outside memory");
    {  // a reduction takes time: others may run (and land data) before it reads its operands
      Lock lk(w_.mu_);
      w_.maybe_yield(r_, lk, 2);
    }
    for (std::uint64_t i = 0; i < count; ++i) {
      float d, s;
      std::memcpy(&d, memory() + dst + 4 * i, 4);
      std::memcpy(&s, memory() + src + 4 * i, 4);
      d += s;
      std::memcpy(memory() + dst + 4 * i, &d, 4);
    }
  }
  void compute(std::uint64_t) override {}
  void barrier() override {
    Lock lk(w_.mu_);
    const std::uint64_t gen = w_.barrier_gen_;
    if (++w_.barrier_arrived_ == static_cast<std::uint64_t>(w_.n_)) {
      w_.barrier_arrived_ = 0;
      ++w_.barrier_gen_;
    }
    w_.block_until(r_, lk, [this, gen] { return w_.barrier_gen_ > gen; });
  }
  std::uint64_t now_ps() const override { return 0; }

 private:
  std::uint64_t post(bool read, int peer, std::uint64_t peer_addr, std::uint64_t local_addr, std::uint64_t bytes,
                     int flag) {
    Lock lk(w_.mu_);
    const bool peer_ok = (peer >= 0 && peer < w_.n_ && peer != r_) || (w_.host_ >= 0 && peer == w_.host_);
    if (!peer_ok) throw std::out_of_range("rank " + std::to_string(r_) + ": bad peer " + std::to_string(peer));
    const std::uint64_t pm = w_.mem_[peer].size(), lm = memory_bytes();
    if (peer_addr > pm || bytes > pm - peer_addr || local_addr > lm || bytes > lm - local_addr)
      throw std::out_of_range("rank " + std::to_string(r_) + ": operation outside memory");
    if (flag >= kFlags) throw std::out_of_range("bad flag id");
    Pending p{r_, peer, read, peer_addr, local_addr, bytes, flag, {}, w_.next_op_++};
    if (!read) p.data.assign(memory() + local_addr, memory() + local_addr + bytes);
    w_.open_[r_].insert(p.id);
    w_.pending_.push_back(std::move(p));
    const std::uint64_t id = w_.pending_.back().id;
    w_.maybe_yield(r_, lk);
    return id;
  }

  FakeWorld& w_;
  int r_;
};

std::string FakeWorld::run(const std::function<void(accelerator_api&)>& program) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n_; ++r)
    threads.emplace_back([this, r, &program] {
      Rank rank(*this, r);
      try {
        {
          Lock lk(mu_);
          cv_.wait(lk, [&] { return abort_ || turn_ == r; });
          if (abort_) return;
        }
        program(rank);
        Lock lk(mu_);
        finish(r, lk);
      } catch (const Aborted&) {
      } catch (const std::exception& e) {
        Lock lk(mu_);
        fail("rank " + std::to_string(r) + ": " + e.what());
      }
    });
  for (auto& t : threads) t.join();
  return error_;
}

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
