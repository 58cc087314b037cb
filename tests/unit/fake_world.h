#pragma once
// A fake fabric for software tests without SystemC (FakeWorld): one thread per
// rank, one at a time (a baton); posted operations are delivered after a
// random delay and in a random order across (requester, peer) pairs (FIFO
// within a pair, as the fabric model); read data are sampled at delivery.
// There is no time: now_ps() is 0 and computations take none. Each run is
// deterministic for its seed. Used by test_transports.cpp and test_schedule.cpp.
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

#include "models/accelerator/sw_api.h"

namespace fabricsim_test {

using fabricsim::models::accelerator_api;

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
  static constexpr int kFlags = 4096;  // schedules use one flag per message received

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
      if (deliver_op)
        deliver(ops[pick(ops.size())]);
      else
        hand_to(others[pick(others.size())], r, lk);
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
  bool op_done(std::uint64_t op) const override { return w_.open_[r_].count(op) == 0; }
  // No time here: a timed wait returns at once (its time has come); an untimed one blocks.
  void wait_until(const std::function<bool()>& ready, std::uint64_t until_ps,
                  const std::function<std::string()>&) override {
    if (until_ps != kForever) return;
    Lock lk(w_.mu_);
    w_.block_until(r_, lk, ready);
  }
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

inline std::string FakeWorld::run(const std::function<void(accelerator_api&)>& program) {
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

}  // namespace fabricsim_test
