#include "sw/schedule_exec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace fabricsim::sw {

using models::accelerator_api;

ScheduleLayout layout_schedule(const Schedule& S, std::uint64_t T, std::uint64_t piece_bytes) {
  ScheduleLayout L;
  L.bytes = T;
  L.piece_bytes = piece_bytes;
  auto pieces = [&](std::uint64_t n) { return piece_bytes ? (n + piece_bytes - 1) / piece_bytes : 1; };
  L.chunk = chunk_bytes(S, T);
  const std::uint64_t C = L.chunk;
  const int N = S.ngpus;
  L.ranks.resize(N);
  L.steps.resize(N);
  for (int g = 0; g < N; ++g) {
    const ScheduleGpu& G = S.gpus[g];
    ScheduleRankLayout& R = L.ranks[g];
    // A custom schedule's buffers are its chunk counts (check_run bounds them).
    const bool custom = S.op == Op::custom;
    const std::uint64_t in = custom ? G.i_chunks * C : op_in_bytes(S.op, T, N);
    const std::uint64_t out = custom ? G.o_chunks * C : op_out_bytes(S.op, T, N);
    R.in_bytes = in;
    R.out_bytes = out;
    R.scratch_bytes = G.s_chunks * C;
    if (custom && S.inplace) {  // i and o are one buffer
      R.in = R.out = 0;
      R.scratch = std::max(in, out);
    } else if (!S.inplace) {
      R.in = 0;
      R.out = in;
      R.scratch = in + out;
    } else if (S.op == Op::allgather) {
      R.out = 0;
      R.in = static_cast<std::uint64_t>(g) * in;  // output block r
      R.scratch = out;
    } else if (S.op == Op::reduce_scatter) {
      R.in = 0;
      R.out = static_cast<std::uint64_t>(g) * out;  // input block r
      R.scratch = in;
    } else {
      R.in = R.out = 0;
      R.scratch = in;
    }
    R.staging = R.scratch + R.scratch_bytes;
    R.total = R.staging;
    L.steps[g].resize(G.tbs.size());
    for (std::size_t t = 0; t < G.tbs.size(); ++t) L.steps[g][t].resize(G.tbs[t].steps.size());
  }
  // Receives: one staging slot and one flag per message. The flag counts the
  // message's landed pieces, so a message is known to be there whatever order
  // the fabric completes writes in (a PCIe host's GPU interleaves its
  // concurrent transfers, so a later message can land before an earlier one
  // on the same connection).
  std::uint32_t max_messages = 0;
  for (int g = 0; g < N; ++g) {
    ScheduleRankLayout& R = L.ranks[g];
    std::uint32_t flag = 0;
    for (std::size_t t = 0; t < S.gpus[g].tbs.size(); ++t) {
      std::uint64_t seq = 0;
      const auto& steps = S.gpus[g].tbs[t].steps;
      for (std::size_t k = 0; k < steps.size(); ++k) {
        if (!receives(steps[k].type)) continue;
        StepPlan& P = L.steps[g][t][k];
        P.rx_addr = R.total;
        P.rx_seq = seq++;
        P.rx_need = pieces(steps[k].cnt * C);
        P.rx_flag = static_cast<int>(flag++);
        R.total += steps[k].cnt * C;
      }
    }
    max_messages = std::max(max_messages, flag);
  }
  L.flags = std::max<std::uint32_t>(8, max_messages);
  // Sends: the matching receive (validate() guarantees one), in step order per connection.
  for (int g = 0; g < N; ++g)
    for (std::size_t t = 0; t < S.gpus[g].tbs.size(); ++t) {
      const ScheduleThreadblock& T0 = S.gpus[g].tbs[t];
      if (T0.send < 0) continue;
      const int p = T0.send;
      std::size_t rt = 0;
      while (rt < S.gpus[p].tbs.size() && !(S.gpus[p].tbs[rt].recv == g && S.gpus[p].tbs[rt].chan == T0.chan)) ++rt;
      std::vector<std::size_t> rx;
      if (rt < S.gpus[p].tbs.size())
        for (std::size_t k = 0; k < S.gpus[p].tbs[rt].steps.size(); ++k)
          if (receives(S.gpus[p].tbs[rt].steps[k].type)) rx.push_back(k);
      std::size_t m = 0;
      for (std::size_t k = 0; k < T0.steps.size(); ++k) {
        if (!sends(T0.steps[k].type)) continue;
        if (m >= rx.size()) throw std::logic_error("layout_schedule: unmatched send (schedule not validated)");
        StepPlan& P = L.steps[g][t][k];
        const StepPlan& Q = L.steps[p][rt][rx[m++]];
        P.tx_peer = p;
        P.tx_addr = Q.rx_addr;
        P.tx_flag = Q.rx_flag;
      }
    }
  for (const auto& R : L.ranks) L.memory_bytes = std::max(L.memory_bytes, R.total);
  return L;
}

namespace {

std::uint64_t ps_for(std::uint64_t bytes, double rate) {
  return rate > 0 ? static_cast<std::uint64_t>(static_cast<double>(bytes) / rate * 1e12 + 0.5) : 0;
}

// One rank's executor: threadblocks as state machines driven from the rank's thread.
class Executor {
 public:
  Executor(accelerator_api& a, const Schedule& S, const ScheduleLayout& L, int g, const ExecOptions& o,
           RankRecords* rec)
      : a_(a), L_(L), g_(g), G_(S.gpus[g]), R_(L.ranks[g]), opt_(o), rec_(rec), tb_(G_.tbs.size()) {
    if (rec_) {
      rec_->assign(G_.tbs.size(), {});
      for (std::size_t t = 0; t < G_.tbs.size(); ++t) (*rec_)[t].assign(G_.tbs[t].steps.size(), {});
    }
    tb_rate_ = a.threadblock_rate_bytes_per_s();
    reduce_rate_ = a.reduce_rate_bytes_per_s();
  }

  void run() {
    const std::uint64_t t0 = a_.now_ps();
    for (auto& t : tb_) t.since = t0;
    for (;;) {
      bool moved = true;
      while (moved) {
        moved = false;
        for (std::size_t t = 0; t < tb_.size(); ++t) moved = advance(t) || moved;
      }
      note_landed();
      if (std::all_of(tb_.begin(), tb_.end(), [&](const Tb& x) { return x.done; })) break;
      // Wake at the earliest end of a computation (a send in flight wakes the rank when it lands).
      std::uint64_t timer = accelerator_api::kForever;
      const std::uint64_t now = a_.now_ps();
      for (const auto& x : tb_)
        if (!x.done && x.phase != Phase::wait && x.busy_until > now) timer = std::min(timer, x.busy_until);
      // The rank is woken whenever one of its operations completes: note
      // the sends that landed then, at that time (not when a threadblock
      // next moves).
      a_.wait_until(
          [this] {
            note_landed();
            return any_ready();
          },
          timer, [this] { return describe(); });
    }
    while (!in_flight_.empty()) {
      a_.wait(in_flight_.front().op);
      note_landed();
    }
    a_.wait_all();
  }

 private:
  struct InFlight {
    std::size_t tb, step;
    std::uint64_t op;
  };
  // Record when posted sends landed (for the step report).
  void note_landed() {
    if (in_flight_.empty()) return;
    const std::uint64_t now = a_.now_ps();
    std::size_t keep = 0;
    for (std::size_t i = 0; i < in_flight_.size(); ++i) {
      if (a_.op_done(in_flight_[i].op))
        (*rec_)[in_flight_[i].tb][in_flight_[i].step].landed = now;
      else
        in_flight_[keep++] = in_flight_[i];
    }
    in_flight_.resize(keep);
  }
  enum class Phase { wait, busy, sending };
  struct Tb {
    std::size_t k = 0;  // current step
    Phase phase = Phase::wait;
    std::uint64_t busy_until = 0;
    std::uint64_t since = 0;                 // current step became current
    std::uint64_t sent = 0, send_start = 0;  // sending: bytes posted, when streaming began
    bool done = false;
    std::size_t finished = 0;  // steps finished
  };

  int fabric(int r) const { return opt_.fabric_rank.empty() ? r : opt_.fabric_rank[r]; }
  std::uint64_t base(Buf b) const { return b == Buf::input ? R_.in : b == Buf::output ? R_.out : R_.scratch; }
  bool tb_empty(std::size_t t) const { return G_.tbs[t].steps.empty(); }

  bool dep_met(const ScheduleStep& P) const {
    return P.depid < 0 || tb_[P.depid].finished > static_cast<std::size_t>(P.deps);
  }
  bool message_here(std::size_t t, const ScheduleStep& P) const {
    if (!receives(P.type)) return true;
    const StepPlan& Q = L_.steps[g_][t][tb_[t].k];
    return a_.flag(Q.rx_flag) >= Q.rx_need;
  }
  bool ready_to_move(std::size_t t) const {
    const Tb& x = tb_[t];
    if (x.done) return false;
    if (tb_empty(t)) return true;
    const std::uint64_t now = a_.now_ps();
    switch (x.phase) {
      case Phase::wait: {
        const ScheduleStep& P = G_.tbs[t].steps[x.k];
        return dep_met(P) && message_here(t, P);
      }
      case Phase::busy: return now >= x.busy_until;
      case Phase::sending: return now >= x.busy_until;
    }
    return false;
  }
  bool any_ready() const {
    for (std::size_t t = 0; t < tb_.size(); ++t)
      if (ready_to_move(t)) return true;
    return false;
  }

  // Local data work of a step (functional accelerators only) and its time.
  std::uint64_t local_work(std::size_t t, const ScheduleStep& P) {
    const StepPlan& Q = L_.steps[g_][t][tb_[t].k];
    const std::uint64_t n = P.cnt * L_.chunk;
    const std::uint64_t src = base(P.srcbuf) + P.srcoff * L_.chunk, dst = base(P.dstbuf) + P.dstoff * L_.chunk;
    unsigned char* m = a_.functional() ? a_.memory() : nullptr;
    auto copy = [&](std::uint64_t d, std::uint64_t s) {
      if (m && d != s) std::memmove(m + d, m + s, n);
    };
    auto add = [&](std::uint64_t d, std::uint64_t s) {  // d += s, float32
      if (!m) return;
      for (std::uint64_t i = 0; i < n; i += 4) {
        float x, y;
        std::memcpy(&x, m + d + i, 4);
        std::memcpy(&y, m + s + i, 4);
        x += y;
        std::memcpy(m + d + i, &x, 4);
      }
    };
    bool reduce = false;
    switch (P.type) {
      case StepType::recv:
      case StepType::recv_copy_send: copy(dst, Q.rx_addr); break;
      case StepType::recv_reduce_copy:
      case StepType::recv_reduce_copy_send:
        copy(dst, src);
        add(dst, Q.rx_addr);
        reduce = true;
        break;
      case StepType::recv_reduce_send:
        add(Q.rx_addr, src);  // the sum goes on from the staging slot
        reduce = true;
        break;
      case StepType::reduce:
        add(dst, src);
        reduce = true;
        break;
      case StepType::copy: copy(dst, src); break;
      case StepType::send:
      case StepType::nop: return 0;
    }
    const std::uint64_t now = a_.now_ps();
    // The threadblock copies / reduces itself; a step that also sends does it
    // in the same pass as it streams the send (rcs, rrs, rrcs: one pass).
    if (tb_rate_ > 0) return sends(P.type) ? 0 : ps_for(n, tb_rate_);
    if (!reduce) return 0;  // copies: free, as in the built-in algorithms
    // The shared reduction unit, one reduction at a time.
    const std::uint64_t start = std::max(now, unit_free_);
    unit_free_ = start + ps_for(n, reduce_rate_);
    return unit_free_ - now;
  }

  std::uint64_t send_source(std::size_t t, const ScheduleStep& P) const {
    const StepPlan& Q = L_.steps[g_][t][tb_[t].k];
    switch (P.type) {
      case StepType::send: return base(P.srcbuf) + P.srcoff * L_.chunk;
      case StepType::recv_reduce_send: return Q.rx_addr;
      default: return base(P.dstbuf) + P.dstoff * L_.chunk;  // rcs, rrcs: what was stored
    }
  }

  void finish_step(std::size_t t) {
    Tb& x = tb_[t];
    if (rec_) (*rec_)[t][x.k].end = a_.now_ps();
    ++x.finished;
    ++x.k;
    x.phase = Phase::wait;
    x.since = a_.now_ps();
    if (x.k >= G_.tbs[t].steps.size()) x.done = true;
  }

  // Move threadblock t as far as it can go now; true if anything changed.
  bool advance(std::size_t t) {
    Tb& x = tb_[t];
    if (x.done) return false;
    if (tb_empty(t)) {
      x.done = true;
      return true;
    }
    bool moved = false;
    while (!x.done && ready_to_move(t)) {
      moved = true;
      const ScheduleStep& P = G_.tbs[t].steps[x.k];
      const std::uint64_t now = a_.now_ps();
      if (x.phase == Phase::wait) {
        if (rec_) {
          StepRecord& r = (*rec_)[t][x.k];
          r.start = x.since;
          r.ready = now;
          // What held it up last: nothing beyond its previous step, its
          // dependency (finished just now), else its message.
          if (now == x.since)
            r.cause = 0;
          else if (P.depid >= 0 && (*rec_)[P.depid][P.deps].end == now)
            r.cause = 1;
          else
            r.cause = receives(P.type) ? 2 : 1;
        }
        const std::uint64_t w = local_work(t, P);
        x.phase = Phase::busy;
        x.busy_until = now + w;
        continue;
      }
      if (x.phase == Phase::busy) {
        if (sends(P.type)) {
          const StepPlan& Q = L_.steps[g_][t][x.k];
          const std::uint64_t n = P.cnt * L_.chunk;
          x.phase = Phase::sending;
          x.sent = 0;
          x.send_start = now;
          if (tb_rate_ <= 0 || L_.piece_bytes == 0) {
            // A posted write: the step ends when it is handed to the fabric.
            post_piece(t, P, Q, n);
            finish_step(t);
            continue;
          }
          // The threadblock streams the message at its rate: each piece is
          // posted once streamed; the step ends with the last piece.
          x.busy_until = now + ps_for(std::min(L_.piece_bytes, n), tb_rate_);
          continue;
        }
        finish_step(t);
        continue;
      }
      // Sending: the next piece has been streamed.
      const StepPlan& Q = L_.steps[g_][t][x.k];
      const std::uint64_t n = P.cnt * L_.chunk;
      post_piece(t, P, Q, std::min(L_.piece_bytes, n - x.sent));
      if (x.sent >= n) {
        finish_step(t);
        continue;
      }
      x.busy_until = x.send_start + ps_for(std::min(x.sent + L_.piece_bytes, n), tb_rate_);
    }
    return moved;
  }

  void post_piece(std::size_t t, const ScheduleStep& P, const StepPlan& Q, std::uint64_t len) {
    Tb& x = tb_[t];
    const std::uint64_t op =
        a_.post_write(fabric(Q.tx_peer), Q.tx_addr + x.sent, send_source(t, P) + x.sent, len, Q.tx_flag);
    x.sent += len;
    if (rec_ && x.sent >= P.cnt * L_.chunk) in_flight_.push_back({t, x.k, op});
  }

  std::string describe() const {
    std::string out = fmt::format("schedule rank {}:", g_);
    for (std::size_t t = 0; t < tb_.size(); ++t) {
      const Tb& x = tb_[t];
      if (x.done) continue;
      const ScheduleThreadblock& T = G_.tbs[t];
      const ScheduleStep& P = T.steps[x.k];
      out += fmt::format("\n    threadblock {} step {} ({}): ", t, x.k, to_string(P.type));
      if (x.phase == Phase::sending) {
        out += fmt::format("streaming its send to rank {} until {:.3f} us", T.send, x.busy_until / 1e6);
      } else if (x.phase == Phase::busy) {
        out += fmt::format("computing until {:.3f} us", x.busy_until / 1e6);
      } else if (!dep_met(P)) {
        out += fmt::format("waits for threadblock {} step {}", P.depid, P.deps);
      } else {
        const StepPlan& Q = L_.steps[g_][t][x.k];
        out += fmt::format("waits for message {} from rank {} on channel {} (flag {} at {} of {})", Q.rx_seq, T.recv,
                           T.chan, Q.rx_flag, a_.flag(Q.rx_flag), Q.rx_need);
      }
    }
    return out;
  }

  accelerator_api& a_;
  const ScheduleLayout& L_;
  int g_;
  const ScheduleGpu& G_;
  const ScheduleRankLayout& R_;
  const ExecOptions& opt_;
  RankRecords* rec_;
  std::vector<Tb> tb_;
  double tb_rate_ = 0, reduce_rate_ = 0;
  std::uint64_t unit_free_ = 0;
  std::vector<InFlight> in_flight_;
};

}  // namespace

void run_schedule(accelerator_api& a, const Schedule& S, const ScheduleLayout& L, int rank, const ExecOptions& opt,
                  RankRecords* records) {
  if (L.ranks[rank].total > a.memory_bytes())
    throw std::out_of_range(fmt::format("schedule rank {} needs {} B of memory, the accelerator has {} B", rank,
                                        L.ranks[rank].total, a.memory_bytes()));
  Executor(a, S, L, rank, opt, records).run();
}

std::string check_outputs(const Schedule& S, const ScheduleLayout& L, const std::vector<const float*>& out, int root) {
  if (S.op == Op::custom) return "";  // no definition to check against (callers report n/a)
  CollectiveSpec spec;
  spec.op = S.op;
  spec.bytes = L.bytes;
  spec.root = root;
  const int N = S.ngpus;
  const std::uint64_t per_chunk = L.chunk / 4;
  for (int r = 0; r < N; ++r) {
    const std::uint64_t n = L.ranks[r].out_bytes / 4;
    for (std::uint64_t i = 0; i < n; ++i) {
      const float want = expected_value(spec, N, r, i);
      if (out[r][i] != want) {
        std::string m = fmt::format("rank {} chunk {} of its output (element {}): expected {}, got {}", r,
                                    i / per_chunk, i, want, out[r][i]);
        // A common slip with older MSCCL files: the result is left in the
        // input buffer of a schedule that does not say it runs in place.
        bool writes_output = false;
        for (const ScheduleThreadblock& T : S.gpus[r].tbs)
          for (const ScheduleStep& P : T.steps) writes_output |= writes_dst(P.type) && P.dstbuf == Buf::output;
        if (!S.inplace && !writes_output)
          m += fmt::format(
              " (no step of rank {} writes buffer o; a schedule that leaves its result in its input buffer runs in "
              "place: inplace=\"1\")",
              r);
        return m;
      }
    }
  }
  return "";
}

std::vector<PathStep> critical_path(const Schedule& S, const std::vector<RankRecords>& rec) {
  std::vector<PathStep> path;
  // The last step to finish.
  int br = -1, bt = -1, bk = -1;
  std::uint64_t best = 0;
  for (int r = 0; r < static_cast<int>(rec.size()); ++r)
    for (int t = 0; t < static_cast<int>(rec[r].size()); ++t)
      if (!rec[r][t].empty() && (br < 0 || rec[r][t].back().end > best)) {
        best = rec[r][t].back().end;
        br = r;
        bt = t;
        bk = static_cast<int>(rec[r][t].size()) - 1;
      }
  // Matching sends, per receive: (rank, tb, step) of the send.
  std::map<std::tuple<int, int, int>, std::tuple<int, int, int>> sender;
  for (int g = 0; g < S.ngpus; ++g)
    for (int t = 0; t < static_cast<int>(S.gpus[g].tbs.size()); ++t) {
      const auto& T = S.gpus[g].tbs[t];
      if (T.send < 0) continue;
      int rt = -1;
      for (int u = 0; u < static_cast<int>(S.gpus[T.send].tbs.size()); ++u)
        if (S.gpus[T.send].tbs[u].recv == g && S.gpus[T.send].tbs[u].chan == T.chan) rt = u;
      if (rt < 0) continue;
      std::vector<int> rx;
      for (int k = 0; k < static_cast<int>(S.gpus[T.send].tbs[rt].steps.size()); ++k)
        if (receives(S.gpus[T.send].tbs[rt].steps[k].type)) rx.push_back(k);
      std::size_t m = 0;
      for (int k = 0; k < static_cast<int>(T.steps.size()); ++k)
        if (sends(T.steps[k].type) && m < rx.size()) sender[{T.send, rt, rx[m++]}] = {g, t, k};
    }
  std::size_t guard = 0;
  while (br >= 0 && guard++ < 10'000'000) {
    path.push_back({br, bt, bk});
    const StepRecord& r = rec[br][bt][bk];
    const ScheduleStep& P = S.gpus[br].tbs[bt].steps[bk];
    if (r.cause == 2) {
      const auto it = sender.find({br, bt, bk});
      if (it == sender.end()) break;
      std::tie(br, bt, bk) = it->second;
    } else if (r.cause == 1) {
      bt = P.depid;
      bk = P.deps;
    } else if (bk > 0) {
      --bk;
    } else {
      break;
    }
  }
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace fabricsim::sw
