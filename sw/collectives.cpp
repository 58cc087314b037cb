#include "sw/collectives.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fabricsim::sw {

using models::accelerator_api;

namespace {

enum Flag : int { kRS = 0, kAG = 1, kPush = 2, kTree = 3, kTreeDown = 4, kBcast = 5 };

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }
int log2i(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}
int mod(int a, int n) { return ((a % n) + n) % n; }

// Local copies are free in time (the cost model has none) and skipped on a
// timing-only accelerator.
void local_copy(accelerator_api& a, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
  if (a.functional()) std::memmove(a.memory() + dst, a.memory() + src, bytes);
}

// ---- AllReduce ---------------------------------------------------------------

// Ring reduce-scatter in `work` (T bytes, N chunks of C): rank r ends with
// chunk r fully reduced. Receive slots: scratch + s*C. `sync_steps` adds the
// paper's global barrier after every step.
void ring_reduce_scatter(accelerator_api& a, std::uint64_t work, std::uint64_t scratch, std::uint64_t C, bool sync_steps) {
  const int N = a.ranks(), r = a.rank();
  const int next = mod(r + 1, N);
  for (int s = 0; s < N - 1; ++s) {
    const int send_chunk = mod(r - 1 - s, N);
    const int recv_chunk = mod(r - 2 - s, N);
    a.post_write(next, scratch + s * C, work + send_chunk * C, C, kRS);
    a.wait_flag(kRS, s + 1);
    a.reduce_f32(work + recv_chunk * C, scratch + s * C, C / 4);
    if (sync_steps) a.barrier();
  }
}

// Ring all-gather of the N chunks of `buf`, rank r owning chunk r.
void ring_all_gather(accelerator_api& a, std::uint64_t buf, std::uint64_t C, bool sync_steps) {
  const int N = a.ranks(), r = a.rank();
  const int next = mod(r + 1, N);
  for (int s = 0; s < N - 1; ++s) {
    const int send_chunk = mod(r - s, N);
    a.post_write(next, buf + send_chunk * C, buf + send_chunk * C, C, kAG);
    a.wait_flag(kAG, s + 1);
    if (sync_steps) a.barrier();
  }
}

void allreduce_ring(accelerator_api& a, const Layout& L, std::uint64_t T, bool sync_steps) {
  const std::uint64_t C = T / a.ranks();
  local_copy(a, L.out, L.in, T);
  ring_reduce_scatter(a, L.out, L.scratch, C, sync_steps);
  ring_all_gather(a, L.out, C, sync_steps);
  a.wait_all();
}

// One-shot: every rank's full input lands in every peer's slot [sender].
void allreduce_oneshot(accelerator_api& a, const Layout& L, std::uint64_t T, const std::string& how) {
  const int N = a.ranks(), r = a.rank();
  auto slot = [&](int sender) { return L.scratch + static_cast<std::uint64_t>(mod(sender - r - 1, N)) * T; };
  if (how == "push") {
    for (int p = 1; p < N; ++p) {
      const int dst = mod(r + p, N);
      a.post_write(dst, L.scratch + static_cast<std::uint64_t>(mod(r - dst - 1, N)) * T, L.in, T, kPush);
    }
    a.wait_flag(kPush, N - 1);
  } else if (how == "phased") {
    // Phase p: rank r -> (r + p) mod N, one destination at a time.
    for (int p = 1; p < N; ++p) {
      const int dst = mod(r + p, N);
      a.post_write(dst, L.scratch + static_cast<std::uint64_t>(mod(r - dst - 1, N)) * T, L.in, T, kPush);
      a.wait_flag(kPush, p);
    }
  } else {  // pull
    std::vector<std::uint64_t> ops;
    for (int p = 1; p < N; ++p) {
      const int src = mod(r + p, N);
      ops.push_back(a.post_read(src, L.in, slot(src), T));
    }
    for (auto op : ops) a.wait(op);
  }
  local_copy(a, L.out, L.in, T);
  for (int p = 1; p < N; ++p) a.reduce_f32(L.out, slot(mod(r + p, N)), T / 4);
  a.wait_all();
}

// Binomial tree: reduce to rank 0 (round k: ranks with lowest set bit k send
// to rank - 2^k), then broadcast back down the same tree.
void allreduce_tree(accelerator_api& a, const Layout& L, std::uint64_t T) {
  const int N = a.ranks(), r = a.rank();
  const int K = log2i(N);
  local_copy(a, L.out, L.in, T);
  for (int k = 0; k < K; ++k) {
    const int bit = 1 << k;
    if (r & bit) {
      a.post_write(r - bit, L.scratch + k * T, L.out, T, kTree);
      break;
    }
    if (r + bit < N) {
      a.wait_flag(kTree, [&] {
        std::uint64_t c = 0;
        for (int j = 0; j <= k; ++j) c += (r + (1 << j) < N) ? 1 : 0;
        return c;
      }());
      a.reduce_f32(L.out, L.scratch + k * T, T / 4);
    }
  }
  // Broadcast down: a rank receives from its parent (r - lowest set bit), then
  // forwards to r + 2^j for j below its lowest set bit, largest first.
  const int low = r == 0 ? K : [&] { int j = 0; while (!(r & (1 << j))) ++j; return j; }();
  if (r != 0) a.wait_flag(kTreeDown, 1);
  for (int j = low - 1; j >= 0; --j)
    if (r + (1 << j) < N) a.post_write(r + (1 << j), L.out, L.out, T, kTreeDown);
  a.wait_all();
}

// ---- ReduceScatter / AllGather / AllToAll / Broadcast -------------------------

void reduce_scatter(accelerator_api& a, const Layout& L, std::uint64_t T, const std::string& alg) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t C = T / N;
  if (alg == "ring") {
    local_copy(a, L.scratch, L.in, T);  // work copy; receive slots follow it
    ring_reduce_scatter(a, L.scratch, L.scratch + T, C, false);
    local_copy(a, L.out, L.scratch + r * C, C);
    a.wait_all();
    return;
  }
  // direct / phased: chunk k of my input goes to rank k's slot [sender].
  auto slot = [&](int sender) { return L.scratch + static_cast<std::uint64_t>(mod(sender - r - 1, N)) * C; };
  for (int p = 1; p < N; ++p) {
    const int dst = mod(r + p, N);
    a.post_write(dst, L.scratch + static_cast<std::uint64_t>(mod(r - dst - 1, N)) * C, L.in + dst * C, C, kRS);
    if (alg == "phased") a.wait_flag(kRS, p);
  }
  a.wait_flag(kRS, N - 1);
  local_copy(a, L.out, L.in + r * C, C);
  for (int p = 1; p < N; ++p) a.reduce_f32(L.out, slot(mod(r + p, N)), C / 4);
  a.wait_all();
}

void all_gather(accelerator_api& a, const Layout& L, std::uint64_t T, const std::string& alg) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t C = T / N;
  local_copy(a, L.out + r * C, L.in, C);
  if (alg == "ring") {
    ring_all_gather(a, L.out, C, false);
  } else {
    for (int p = 1; p < N; ++p) {
      a.post_write(mod(r + p, N), L.out + r * C, L.out + r * C, C, kAG);
      if (alg == "phased") a.wait_flag(kAG, p);
    }
    a.wait_flag(kAG, N - 1);
  }
  a.wait_all();
}

void all_to_all(accelerator_api& a, const Layout& L, std::uint64_t T, const std::string& alg) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t C = T / N;
  local_copy(a, L.out + r * C, L.in + r * C, C);
  for (int p = 1; p < N; ++p) {
    const int dst = mod(r + p, N);
    a.post_write(dst, L.out + r * C, L.in + dst * C, C, kPush);
    if (alg == "phased") a.wait_flag(kPush, p);
  }
  a.wait_flag(kPush, N - 1);
  a.wait_all();
}

void broadcast(accelerator_api& a, const Layout& L, std::uint64_t T, const CollectiveSpec& s) {
  const int N = a.ranks(), r = a.rank();
  const int vr = mod(r - s.root, N);  // virtual rank: root is 0
  if (vr == 0) local_copy(a, L.out, L.in, T);
  if (s.algorithm == "tree") {
    const int K = log2i(N);
    const int low = vr == 0 ? K : [&] { int j = 0; while (!(vr & (1 << j))) ++j; return j; }();
    if (vr != 0) a.wait_flag(kBcast, 1);
    for (int j = low - 1; j >= 0; --j)
      if (vr + (1 << j) < N) a.post_write(mod(r + (1 << j), N), L.out, L.out, T, kBcast);
  } else {  // ring pipeline of K chunks along r -> r+1
    const int K = std::max(1, s.pipeline_chunks);
    const std::uint64_t C = T / K;
    for (int c = 0; c < K; ++c) {
      const std::uint64_t off = c * C, len = c == K - 1 ? T - off : C;
      if (vr != 0) a.wait_flag(kBcast, c + 1);
      if (vr != N - 1) a.post_write(mod(r + 1, N), L.out + off, L.out + off, len, kBcast);
    }
  }
  a.wait_all();
}

}  // namespace

Op parse_op(const std::string& n) {
  if (n == "allreduce") return Op::allreduce;
  if (n == "reduce_scatter") return Op::reduce_scatter;
  if (n == "allgather") return Op::allgather;
  if (n == "alltoall") return Op::alltoall;
  if (n == "broadcast") return Op::broadcast;
  throw std::invalid_argument("unknown collective '" + n +
                              "' (valid: allreduce, reduce_scatter, allgather, alltoall, broadcast)");
}

std::string to_string(Op op) {
  switch (op) {
    case Op::allreduce: return "allreduce";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::allgather: return "allgather";
    case Op::alltoall: return "alltoall";
    case Op::broadcast: return "broadcast";
  }
  return "?";
}

const std::vector<std::string>& algorithms(Op op) {
  static const std::vector<std::string> ar{"ring", "ring-sync", "oneshot-push", "oneshot-pull", "phased-push", "tree"};
  static const std::vector<std::string> rsag{"ring", "direct", "phased"};
  static const std::vector<std::string> a2a{"direct", "phased"};
  static const std::vector<std::string> bc{"tree", "ring"};
  switch (op) {
    case Op::allreduce: return ar;
    case Op::reduce_scatter:
    case Op::allgather: return rsag;
    case Op::alltoall: return a2a;
    case Op::broadcast: return bc;
  }
  return ar;
}

Layout layout(const CollectiveSpec& s, int N) {
  const auto& algs = algorithms(s.op);
  if (std::find(algs.begin(), algs.end(), s.algorithm) == algs.end()) {
    std::string v;
    for (const auto& x : algs) v += (v.empty() ? "" : ", ") + x;
    throw std::invalid_argument("unknown " + to_string(s.op) + " algorithm '" + s.algorithm + "' (valid: " + v + ")");
  }
  if (N < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  const std::uint64_t T = s.bytes;
  if (T == 0 || T % (4ull * N) != 0)
    throw std::invalid_argument("collective size " + std::to_string(T) + " B must be a positive multiple of 4 x ranks (" +
                                std::to_string(4 * N) + " B)");
  if ((s.algorithm == "tree") && !power_of_two(N))
    throw std::invalid_argument("the tree algorithms need a power-of-two number of ranks");
  if (s.op == Op::broadcast && (s.root < 0 || s.root >= N))
    throw std::invalid_argument("broadcast root " + std::to_string(s.root) + " out of range [0, " + std::to_string(N - 1) + "]");
  if (s.op == Op::broadcast && s.algorithm == "ring" && (s.pipeline_chunks < 1 || static_cast<std::uint64_t>(s.pipeline_chunks) > T / 4))
    throw std::invalid_argument("pipeline_chunks " + std::to_string(s.pipeline_chunks) + " must lie in [1, " +
                                std::to_string(T / 4) + "] (at least one float per chunk)");
  const std::uint64_t C = T / N;
  Layout L;
  L.in = 0;
  std::uint64_t scratch = 0;
  switch (s.op) {
    case Op::allreduce:
      L.in_bytes = L.out_bytes = T;
      if (s.algorithm == "ring" || s.algorithm == "ring-sync") scratch = (N - 1) * C;
      else if (s.algorithm == "tree") scratch = log2i(N) * T;
      else scratch = (N - 1) * T;
      break;
    case Op::reduce_scatter:
      L.in_bytes = T;
      L.out_bytes = C;
      scratch = s.algorithm == "ring" ? T + (N - 1) * C : (N - 1) * C;
      break;
    case Op::allgather:
      L.in_bytes = C;
      L.out_bytes = T;
      break;
    case Op::alltoall:
    case Op::broadcast:
      L.in_bytes = L.out_bytes = T;
      break;
  }
  L.out = L.in + L.in_bytes;
  L.scratch = L.out + L.out_bytes;
  L.total = L.scratch + scratch;
  return L;
}

void run_collective(accelerator_api& a, const CollectiveSpec& s) {
  const Layout L = layout(s, a.ranks());
  if (L.total > a.memory_bytes())
    throw std::out_of_range("collective needs " + std::to_string(L.total) + " B of memory, rank has " +
                            std::to_string(a.memory_bytes()));
  const std::uint64_t T = s.bytes;
  switch (s.op) {
    case Op::allreduce:
      if (s.algorithm == "ring") allreduce_ring(a, L, T, false);
      else if (s.algorithm == "ring-sync") allreduce_ring(a, L, T, true);
      else if (s.algorithm == "oneshot-push") allreduce_oneshot(a, L, T, "push");
      else if (s.algorithm == "oneshot-pull") allreduce_oneshot(a, L, T, "pull");
      else if (s.algorithm == "phased-push") allreduce_oneshot(a, L, T, "phased");
      else allreduce_tree(a, L, T);
      break;
    case Op::reduce_scatter: reduce_scatter(a, L, T, s.algorithm); break;
    case Op::allgather: all_gather(a, L, T, s.algorithm); break;
    case Op::alltoall: all_to_all(a, L, T, s.algorithm); break;
    case Op::broadcast: broadcast(a, L, T, s); break;
  }
}

double busbw_factor(Op op, int N) {
  switch (op) {
    case Op::allreduce: return 2.0 * (N - 1) / N;
    case Op::reduce_scatter:
    case Op::allgather:
    case Op::alltoall: return static_cast<double>(N - 1) / N;
    case Op::broadcast: return 1.0;
  }
  return 1.0;
}

float input_value(int rank, std::uint64_t i) { return static_cast<float>((rank + 1) * ((i % 13) + 1)); }

float expected_value(const CollectiveSpec& s, int N, int r, std::uint64_t i) {
  const std::uint64_t C = s.bytes / 4 / N;  // elements per chunk
  switch (s.op) {
    // sum over q of (q + 1) x m = m N (N + 1) / 2: exact in float32 while < 2^24.
    case Op::allreduce: return static_cast<float>((i % 13 + 1) * static_cast<std::uint64_t>(N) * (N + 1) / 2);
    case Op::reduce_scatter:
      return static_cast<float>(((r * C + i) % 13 + 1) * static_cast<std::uint64_t>(N) * (N + 1) / 2);
    case Op::allgather: return input_value(static_cast<int>(i / C), i % C);
    case Op::alltoall: return input_value(static_cast<int>(i / C), r * C + i % C);
    case Op::broadcast: return input_value(s.root, i);
  }
  return 0;
}

}  // namespace fabricsim::sw
