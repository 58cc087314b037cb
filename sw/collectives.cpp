#include "sw/collectives.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fabricsim::sw {

using models::accelerator_api;

namespace {

// Flag ids (collectives.md conventions). 0..5: the original algorithms (the
// transports reuse kRS / kAG / kPush where the meaning is the same). 6..11:
// bulk_push chunk j arrivals on 6 + j mod 3 (bulk_push_phased: 6 only),
// nccl_simple_read "chunk ready" signals, nccl_shm doorbells and "host slot
// consumed" acknowledgements.
enum Flag : int {
  kRS = 0,
  kAG = 1,
  kPush = 2,
  kTree = 3,
  kTreeDown = 4,
  kBcast = 5,
  kBulk = 6,  // 6, 7, 8
  kReady = 9,
  kDoorbell = 10,
  kHostAck = 11,
};
constexpr int kBulkFlags = 3;

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }
int log2i(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}
int mod(int a, int n) { return ((a % n) + n) % n; }

// The one-shot transports (they open and close with a fabric barrier when asked).
bool one_shot(const std::string& alg) {
  for (const char* x : {"pull", "bulk_pull", "full", "payload_rsag", "bulk_push", "full_phased", "payload_rsag_phased",
                        "bulk_push_phased"})
    if (alg == x) return true;
  return false;
}

// Local copies are free in time (the cost model has none) and skipped on a
// timing-only accelerator.
void local_copy(accelerator_api& a, std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
  if (a.functional()) std::memmove(a.memory() + dst, a.memory() + src, bytes);
}

// ---- AllReduce ---------------------------------------------------------------

// Ring reduce-scatter in `work` (T bytes, N chunks of C): rank r ends with
// chunk r fully reduced. Receive slots: scratch + s*C. `sync_steps` adds the
// paper's global barrier after every step.
void ring_reduce_scatter(accelerator_api& a, std::uint64_t work, std::uint64_t scratch, std::uint64_t C,
                         bool sync_steps) {
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
  const int low = r == 0 ? K : [&] {
    int j = 0;
    while (!(r & (1 << j))) ++j;
    return j;
  }();
  if (r != 0) a.wait_flag(kTreeDown, 1);
  for (int j = low - 1; j >= 0; --j)
    if (r + (1 << j) < N) a.post_write(r + (1 << j), L.out, L.out, T, kTreeDown);
  a.wait_all();
}

// ---- AllReduce transports (host-bridge.md §4) -----------------------------------
//
// Slot conventions as above: a one-shot / direct slot for sender s at rank r is
// scratch + ((s - r - 1) mod N) x slot size, so sender r + p lands in slot p - 1.
std::uint64_t slot_at(int sender, int receiver, int N) {
  return static_cast<std::uint64_t>(mod(sender - receiver - 1, N));
}

// Small control messages (nccl_simple_read, nccl_shm) are 8-byte posted
// writes that ring a flag: their bytes are ignored, they land in the
// receiver's mailbox word at scratch + 0 and are sent from scratch + 8.
// (A 0-byte write would do in the fabric model, but a PCIe or host path may
// not accept one.)
constexpr std::uint64_t kSignalBytes = 8;
constexpr std::uint64_t kSignalArea = 2 * kSignalBytes;
void send_signal(accelerator_api& a, const Layout& L, int dst, int flag) {
  a.post_write(dst, L.scratch, L.scratch + kSignalBytes, kSignalBytes, flag);
}

// full_phased: the data of oneshot-push, one destination at a time. Phase
// p = 1..N-1: rank r writes its whole input to r + p (flag 2), waits for its
// own write to land and for the write of its phase source r - p (flag 2 >= p),
// then a barrier closes the phase. Reductions after the last phase.
void allreduce_full_phased(accelerator_api& a, const Layout& L, std::uint64_t T) {
  const int N = a.ranks(), r = a.rank();
  for (int p = 1; p < N; ++p) {
    const int dst = mod(r + p, N);
    const auto op = a.post_write(dst, L.scratch + slot_at(r, dst, N) * T, L.in, T, kPush);
    a.wait(op);
    a.wait_flag(kPush, p);
    a.barrier();
  }
  local_copy(a, L.out, L.in, T);
  for (int p = 1; p < N; ++p) a.reduce_f32(L.out, L.scratch + (p - 1) * T, T / 4);
  a.wait_all();
}

// payload_rsag: direct reduce-scatter then direct all-gather, each pushing
// one chunk (C = T / N) to every peer. RS: rank r writes chunk d of its input
// to rank d's slot for sender r (flag 0), for all d != r at once (base) or
// one d = r + p per phase (phased); it then reduces the N - 1 received copies
// of chunk r into out + r C. AG: rank r writes out + r C to out + r C of
// every peer (flag 1). Phased: after each phase's write a rank waits for its
// own write, for its phase source's write (flag >= p) and a barrier.
void allreduce_payload_rsag(accelerator_api& a, const Layout& L, std::uint64_t T, bool phased) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t C = T / N;
  auto push_to_all = [&](auto src_of, auto dst_addr_of, int flag) {
    for (int p = 1; p < N; ++p) {
      const int dst = mod(r + p, N);
      const auto op = a.post_write(dst, dst_addr_of(dst), src_of(dst), C, flag);
      if (phased) {
        a.wait(op);
        a.wait_flag(flag, p);
        a.barrier();
      }
    }
    a.wait_flag(flag, N - 1);
  };
  // Reduce-scatter.
  push_to_all([&](int dst) { return L.in + dst * C; }, [&](int dst) { return L.scratch + slot_at(r, dst, N) * C; },
              kRS);
  local_copy(a, L.out + r * C, L.in + r * C, C);
  for (int p = 1; p < N; ++p) a.reduce_f32(L.out + r * C, L.scratch + (p - 1) * C, C / 4);
  // All-gather.
  push_to_all([&](int) { return L.out + r * C; }, [&](int) { return L.out + r * C; }, kAG);
  a.wait_all();
}

// Chunks of the bulk algorithms: chunk j is [j B, j B + len(j)) of T.
struct Chunks {
  std::uint64_t B = 0;  // bytes of a full chunk
  std::uint64_t M = 0;  // chunk count
  std::uint64_t T = 0;
  std::uint64_t off(std::uint64_t j) const { return j * B; }
  std::uint64_t len(std::uint64_t j) const { return std::min(B, T - j * B); }
};
Chunks chunks_of(const CollectiveSpec& s) {
  Chunks c;
  c.T = s.bytes;
  c.B = std::min(s.chunk_bytes, s.bytes);
  c.M = (c.T + c.B - 1) / c.B;
  return c;
}
// Staging sets a bulk algorithm keeps (each set: N - 1 slots of B bytes).
std::uint64_t bulk_sets(const std::string& alg, std::uint64_t M) {
  if (alg == "bulk_pull") return std::min<std::uint64_t>(M, 2);
  if (alg == "bulk_push") return std::min<std::uint64_t>(M, kBulkFlags);
  return std::min<std::uint64_t>(M, 2);  // bulk_push_phased
}

// bulk_pull: chunked one-shot pull. For chunk j every rank reads [j B, +len)
// of every peer's input (N - 1 reads at once) into staging set j mod 2, then
// reduces them into out. The reads of chunk j + 1 are posted before the
// reductions of chunk j (double buffering: set (j + 1) mod 2 was last used by
// chunk j - 1, whose reductions are done). Reads need no flags: the inputs
// are ready before the collective starts and never change.
void allreduce_bulk_pull(accelerator_api& a, const Layout& L, const Chunks& k) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t sets = bulk_sets("bulk_pull", k.M);
  auto slot = [&](std::uint64_t j, int p) { return L.scratch + ((j % sets) * (N - 1) + (p - 1)) * k.B; };
  auto post_chunk = [&](std::uint64_t j) {
    std::vector<std::uint64_t> ops;
    for (int p = 1; p < N; ++p) ops.push_back(a.post_read(mod(r + p, N), L.in + k.off(j), slot(j, p), k.len(j)));
    return ops;
  };
  local_copy(a, L.out, L.in, k.T);
  auto ops = post_chunk(0);
  for (std::uint64_t j = 0; j < k.M; ++j) {
    for (auto op : ops) a.wait(op);
    ops = j + 1 < k.M ? post_chunk(j + 1) : std::vector<std::uint64_t>{};
    for (int p = 1; p < N; ++p) a.reduce_f32(L.out + k.off(j), slot(j, p), k.len(j) / 4);
  }
  a.wait_all();
}

// bulk_push: chunked one-shot push. For chunk j every rank writes
// [j B, +len) of its input to its slot in every peer's staging set j mod 3
// (N - 1 writes at once, flag 6 + j mod 3), waits for the N - 1 arrivals of
// chunk j (flag 6 + j mod 3 >= (N - 1)(j / 3 + 1)), posts chunk j + 1, then
// reduces chunk j (the next chunk's pushes overlap this chunk's reductions).
// Why three sets and flags: a rank posts chunk j + 1 only after it received
// chunk j from everyone, so a peer's chunk j + 3 can reach me only after I
// posted chunk j + 2, i.e. after my reductions of chunk j: set j mod 3 is
// free again, and no write of chunk j + 3 can count towards chunk j's flag.
void allreduce_bulk_push(accelerator_api& a, const Layout& L, const Chunks& k) {
  const int N = a.ranks(), r = a.rank();
  auto set_base = [&](std::uint64_t j) { return L.scratch + (j % kBulkFlags) * (N - 1) * k.B; };
  auto flag = [](std::uint64_t j) { return kBulk + static_cast<int>(j % kBulkFlags); };
  auto post_chunk = [&](std::uint64_t j) {
    for (int p = 1; p < N; ++p) {
      const int dst = mod(r + p, N);
      a.post_write(dst, set_base(j) + slot_at(r, dst, N) * k.B, L.in + k.off(j), k.len(j), flag(j));
    }
  };
  local_copy(a, L.out, L.in, k.T);
  post_chunk(0);
  for (std::uint64_t j = 0; j < k.M; ++j) {
    a.wait_flag(flag(j), (N - 1) * (j / kBulkFlags + 1));
    if (j + 1 < k.M) post_chunk(j + 1);
    for (int p = 1; p < N; ++p) a.reduce_f32(L.out + k.off(j), set_base(j) + (p - 1) * k.B, k.len(j) / 4);
  }
  a.wait_all();
}

// bulk_push_phased: bulk_push's data, one destination at a time. For chunk j,
// phase p = 1..N-1: rank r writes the chunk to r + p (flag 6), waits for its
// own write, for its phase source's (flag 6 >= (N - 1) j + p) and a barrier;
// then it reduces chunk j. Two staging sets: a peer writes chunk j + 2 only
// after the barriers of chunk j + 1, which I reach after reducing chunk j.
void allreduce_bulk_push_phased(accelerator_api& a, const Layout& L, const Chunks& k) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t sets = bulk_sets("bulk_push_phased", k.M);
  auto set_base = [&](std::uint64_t j) { return L.scratch + (j % sets) * (N - 1) * k.B; };
  local_copy(a, L.out, L.in, k.T);
  for (std::uint64_t j = 0; j < k.M; ++j) {
    for (int p = 1; p < N; ++p) {
      const int dst = mod(r + p, N);
      const auto op = a.post_write(dst, set_base(j) + slot_at(r, dst, N) * k.B, L.in + k.off(j), k.len(j), kBulk);
      a.wait(op);
      a.wait_flag(kBulk, (N - 1) * j + p);
      a.barrier();
    }
    for (int p = 1; p < N; ++p) a.reduce_f32(L.out + k.off(j), set_base(j) + (p - 1) * k.B, k.len(j) / 4);
  }
  a.wait_all();
}

// nccl_ll: the ring (reduce-scatter then all-gather to the successor only) in
// NCCL's LL format. Each C-byte chunk crosses the wire as C / 4 lines of 8
// bytes: a 4-byte data word and a 4-byte flag word (the step's sequence number
// t + 1), i.e. 2C bytes on the wire for C bytes of data: LL's 50 % efficiency.
// The sender packs the chunk into a local pack buffer (reusable at once: a
// posted write captures its source bytes when posted), writes the 2C bytes
// into the successor's LL receive slot t (one slot per step t = 0..2N-3, so
// no slot is reused), and the receiver unpacks it: into a temporary buffer it
// then reduces from (RS), or straight into out (AG). Arrival is notified by
// the flag counters (flag 0 RS, flag 1 AG, as the ring); the LL flag words are
// carried for their wire cost and checked on unpacking (a stale word means the
// counter announced a line that had not landed). Packing and unpacking take no
// time beyond the reductions, and are skipped on a timing-only accelerator.
//
// Scratch: 2(N - 1) receive slots of 2C, a pack buffer of 2C, a temporary C.
struct LlLayout {
  std::uint64_t recv, pack, tmp;
};
LlLayout ll_layout(const Layout& L, std::uint64_t C, int N) {
  const std::uint64_t recv = L.scratch;
  const std::uint64_t pack = recv + 2ull * (N - 1) * 2 * C;
  return {recv, pack, pack + 2 * C};
}

void ll_pack(accelerator_api& a, std::uint64_t dst, std::uint64_t src, std::uint64_t C, std::uint32_t seq) {
  if (!a.functional()) return;
  unsigned char* m = a.memory();
  for (std::uint64_t i = 0; i < C / 4; ++i) {
    std::memcpy(m + dst + 8 * i, m + src + 4 * i, 4);
    std::memcpy(m + dst + 8 * i + 4, &seq, 4);
  }
}

void ll_unpack(accelerator_api& a, std::uint64_t dst, std::uint64_t src, std::uint64_t C, std::uint32_t seq) {
  if (!a.functional()) return;
  unsigned char* m = a.memory();
  for (std::uint64_t i = 0; i < C / 4; ++i) {
    std::uint32_t f;
    std::memcpy(&f, m + src + 8 * i + 4, 4);
    if (f != seq)
      throw std::logic_error("nccl_ll: rank " + std::to_string(a.rank()) + " line " + std::to_string(i) + " of step " +
                             std::to_string(seq - 1) + " carries flag " + std::to_string(f) + ", expected " +
                             std::to_string(seq));
    std::memcpy(m + dst + 4 * i, m + src + 8 * i, 4);
  }
}

void allreduce_nccl_ll(accelerator_api& a, const Layout& L, std::uint64_t T) {
  const int N = a.ranks(), r = a.rank();
  const int next = mod(r + 1, N);
  const std::uint64_t C = T / N;
  const LlLayout ll = ll_layout(L, C, N);
  // Step t: pack chunk `chunk` of out and write it to the successor's slot t.
  auto send = [&](int t, int chunk, int flag) {
    ll_pack(a, ll.pack, L.out + chunk * C, C, static_cast<std::uint32_t>(t + 1));
    a.post_write(next, ll.recv + t * 2 * C, ll.pack, 2 * C, flag);
  };
  local_copy(a, L.out, L.in, T);
  for (int s = 0; s < N - 1; ++s) {  // reduce-scatter
    send(s, mod(r - 1 - s, N), kRS);
    a.wait_flag(kRS, s + 1);
    ll_unpack(a, ll.tmp, ll.recv + s * 2 * C, C, static_cast<std::uint32_t>(s + 1));
    a.reduce_f32(L.out + mod(r - 2 - s, N) * C, ll.tmp, C / 4);
  }
  for (int s = 0; s < N - 1; ++s) {  // all-gather
    const int t = N - 1 + s;
    send(t, mod(r - s, N), kAG);
    a.wait_flag(kAG, s + 1);
    ll_unpack(a, L.out + mod(r - 1 - s, N) * C, ll.recv + t * 2 * C, C, static_cast<std::uint32_t>(t + 1));
  }
  a.wait_all();
}

// nccl_simple_read: the ring with P2P reads (NCCL Simple protocol with
// P2P_READ): at every step the receiver reads the chunk out of its
// predecessor's out buffer. Step t = 0..2N-3 (RS steps, then AG steps), rank
// r with predecessor `prev`:
//   1. signal "ready" to the successor (8-byte write, flag 9): the chunk it
//      will read from me is final for this step (RS step s: chunk r - 1 - s,
//      reduced in the previous step; AG step s: chunk r - s);
//   2. wait for flag 9 >= t + 1, read prev's chunk (C bytes): RS into a
//      receive slot, then reduce it into out; AG straight into out.
// A count of k means prev has posted its first k signals (it does so in step
// order), so counting is exact in any delivery order.
// Buffer reuse needs no "consumed" signal back: the chunk r - 1 - s I expose
// at RS step s is overwritten at my AG step s = step t = N - 1 + s, and to pass
// step t's wait, prev must have finished step t - 1, hence prev's prev step
// t - 2, ..., hence my successor (N - 1 ranks back along the ring) step
// t - (N - 1) = s: its read of that chunk has completed. AG chunks are final.
//
// Scratch: the signal area, then one receive slot of C.
void allreduce_nccl_simple_read(accelerator_api& a, const Layout& L, std::uint64_t T) {
  const int N = a.ranks(), r = a.rank();
  const int next = mod(r + 1, N), prev = mod(r - 1, N);
  const std::uint64_t C = T / N;
  const std::uint64_t slot = L.scratch + kSignalArea;
  local_copy(a, L.out, L.in, T);
  for (int s = 0; s < N - 1; ++s) {  // reduce-scatter
    send_signal(a, L, next, kReady);
    a.wait_flag(kReady, s + 1);
    const std::uint64_t chunk = mod(r - 2 - s, N) * C;  // prev's exposed chunk prev - 1 - s
    a.wait(a.post_read(prev, L.out + chunk, slot, C));
    a.reduce_f32(L.out + chunk, slot, C / 4);
  }
  for (int s = 0; s < N - 1; ++s) {  // all-gather
    send_signal(a, L, next, kReady);
    a.wait_flag(kReady, N - 1 + s + 1);
    const std::uint64_t chunk = mod(r - 1 - s, N) * C;  // prev's final chunk prev - s
    a.wait(a.post_read(prev, L.out + chunk, L.out + chunk, C));
  }
  a.wait_all();
}

// nccl_shm: the ring through host memory (NCCL's SHM transport). Rank r owns
// host staging [r S, (r + 1) S), S = 2C: two slots, step t using slot t mod 2.
// Step t = 0..2N-3 (RS steps, then AG steps), rank r with prev and next:
//   send: (t >= 2) wait for flag 11 >= t - 1 (next has read my slot of step
//         t - 2), write the chunk to my host slot, wait for that write to
//         land, ring next's doorbell (8-byte write, flag 10);
//   receive: wait for flag 10 >= t + 1, read prev's host slot t mod 2 (RS:
//         into a receive slot, then reduce; AG: straight into out), send
//         "slot consumed" to prev (flag 11).
// The chunks are the ring's (RS step s: send r - 1 - s, receive r - 2 - s;
// AG step s: send r - s, receive r - 1 - s). As for nccl_simple_read, counts
// are exact in any delivery order. Unlike there, the acknowledgement is
// needed (for N > 2): the ring chain only guarantees that my successor has
// finished step t - N when I start step t, not step t - 2.
//
// Scratch: the signal area, then one receive slot of C.
void allreduce_nccl_shm(accelerator_api& a, const Layout& L, std::uint64_t T) {
  const int N = a.ranks(), r = a.rank();
  const int host = a.host_rank();
  const int next = mod(r + 1, N), prev = mod(r - 1, N);
  const std::uint64_t C = T / N, S = 2 * C;
  const std::uint64_t slot = L.scratch + kSignalArea;
  auto host_slot = [&](int owner, int t) { return owner * S + (t % 2) * C; };
  auto step = [&](int t, int send_chunk, int recv_chunk, bool rs) {
    if (t >= 2) a.wait_flag(kHostAck, t - 1);
    a.wait(a.post_write(host, host_slot(r, t), L.out + send_chunk * C, C));
    send_signal(a, L, next, kDoorbell);
    a.wait_flag(kDoorbell, t + 1);
    const std::uint64_t dst = rs ? slot : L.out + recv_chunk * C;
    a.wait(a.post_read(host, host_slot(prev, t), dst, C));
    send_signal(a, L, prev, kHostAck);
    if (rs) a.reduce_f32(L.out + recv_chunk * C, slot, C / 4);
  };
  local_copy(a, L.out, L.in, T);
  for (int s = 0; s < N - 1; ++s) step(s, mod(r - 1 - s, N), mod(r - 2 - s, N), true);
  for (int s = 0; s < N - 1; ++s) step(N - 1 + s, mod(r - s, N), mod(r - 1 - s, N), false);
  a.wait_all();
}

// ---- ReduceScatter / AllGather / AllToAll / Broadcast / SendRecv ---------------

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
    const int low = vr == 0 ? K : [&] {
      int j = 0;
      while (!(vr & (1 << j))) ++j;
      return j;
    }();
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

// SendRecv, ring neighbours. write: rank r writes its T-byte input to rank
// r + 1's out (flag 2) and waits for its own incoming write from r - 1.
// read: rank r reads rank r - 1's input into its out.
void send_recv(accelerator_api& a, const Layout& L, std::uint64_t T, const std::string& alg) {
  const int N = a.ranks(), r = a.rank();
  if (alg == "write") {
    a.post_write(mod(r + 1, N), L.out, L.in, T, kPush);
    a.wait_flag(kPush, 1);
  } else {
    a.wait(a.post_read(mod(r - 1, N), L.in, L.out, T));
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
  if (n == "sendrecv") return Op::sendrecv;
  if (n == "custom") return Op::custom;
  throw std::invalid_argument("unknown collective '" + n +
                              "' (valid: allreduce, reduce_scatter, allgather, alltoall, broadcast, sendrecv, custom)");
}

std::string to_string(Op op) {
  switch (op) {
    case Op::allreduce: return "allreduce";
    case Op::reduce_scatter: return "reduce_scatter";
    case Op::allgather: return "allgather";
    case Op::alltoall: return "alltoall";
    case Op::broadcast: return "broadcast";
    case Op::sendrecv: return "sendrecv";
    case Op::custom: return "custom";
  }
  return "?";
}

const std::vector<std::string>& algorithms(Op op) {
  static const std::vector<std::string> ar{"ring", "ring-sync", "oneshot-push", "oneshot-pull", "phased-push", "tree",
                                           // GPU transports (host-bridge.md §4)
                                           "pull", "bulk_pull", "full", "payload_rsag", "bulk_push", "full_phased",
                                           "payload_rsag_phased", "bulk_push_phased", "write_ring", "nccl_ll",
                                           "nccl_simple_read", "nccl_shm"};
  static const std::vector<std::string> rsag{"ring", "direct", "phased"};
  static const std::vector<std::string> a2a{"direct", "phased"};
  static const std::vector<std::string> bc{"tree", "ring"};
  static const std::vector<std::string> p2p{"write", "read"};
  static const std::vector<std::string> none{};  // custom: users' schedules only
  switch (op) {
    case Op::allreduce: return ar;
    case Op::reduce_scatter:
    case Op::allgather: return rsag;
    case Op::alltoall: return a2a;
    case Op::broadcast: return bc;
    case Op::sendrecv: return p2p;
    case Op::custom: return none;
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
    throw std::invalid_argument("collective size " + std::to_string(T) +
                                " B must be a positive multiple of 4 x ranks (" + std::to_string(4 * N) + " B)");
  if ((s.algorithm == "tree") && !power_of_two(N))
    throw std::invalid_argument("the tree algorithms need a power-of-two number of ranks");
  if (s.op == Op::broadcast && (s.root < 0 || s.root >= N))
    throw std::invalid_argument("broadcast root " + std::to_string(s.root) + " out of range [0, " +
                                std::to_string(N - 1) + "]");
  if (s.op == Op::broadcast && s.algorithm == "ring" &&
      (s.pipeline_chunks < 1 || static_cast<std::uint64_t>(s.pipeline_chunks) > T / 4))
    throw std::invalid_argument("pipeline_chunks " + std::to_string(s.pipeline_chunks) + " must lie in [1, " +
                                std::to_string(T / 4) + "] (at least one float per chunk)");
  const bool bulk = s.op == Op::allreduce && s.algorithm.rfind("bulk_", 0) == 0;
  if (bulk && (s.chunk_bytes == 0 || s.chunk_bytes % 4 != 0))
    throw std::invalid_argument("chunk_bytes " + std::to_string(s.chunk_bytes) +
                                " B must be a positive multiple of 4 B (whole float32 values)");
  const std::uint64_t C = T / N;
  Layout L;
  L.in = 0;
  std::uint64_t scratch = 0;
  switch (s.op) {
    case Op::allreduce: {
      L.in_bytes = L.out_bytes = T;
      const std::string& a = s.algorithm;
      if (a == "ring" || a == "ring-sync" || a == "write_ring" || a == "payload_rsag" || a == "payload_rsag_phased")
        scratch = (N - 1) * C;
      else if (a == "tree")
        scratch = log2i(N) * T;
      else if (bulk) {
        const Chunks k = chunks_of(s);
        scratch = bulk_sets(a, k.M) * (N - 1) * k.B;
      } else if (a == "nccl_ll") {
        const LlLayout ll = ll_layout(Layout{}, C, N);
        scratch = ll.tmp + C;
      } else if (a == "nccl_simple_read" || a == "nccl_shm") {
        scratch = kSignalArea + C;
      } else {
        scratch = (N - 1) * T;  // one-shot: oneshot-*, phased-push, pull, full, full_phased
      }
      break;
    }
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
    case Op::sendrecv:
    case Op::custom: L.in_bytes = L.out_bytes = T; break;
  }
  L.out = L.in + L.in_bytes;
  L.scratch = L.out + L.out_bytes;
  L.total = L.scratch + scratch;
  // Fabric barriers (one-shot transports): a 16-byte mailbox after everything else.
  if (s.fabric_barriers && s.op == Op::allreduce && one_shot(s.algorithm)) L.total += 16;
  return L;
}

std::uint64_t host_bytes(const CollectiveSpec& s, int N) {
  layout(s, N);                                                                // validates
  if (s.op == Op::allreduce && s.algorithm == "nccl_shm") return 2 * s.bytes;  // N ranks x S = 2 T / N
  return 0;
}

namespace {
// A barrier over the fabric: an 8-byte flag write to every peer's mailbox (the
// layout's last 16 bytes; contents ignored), then wait for every peer's.
void fabric_barrier(accelerator_api& a, const Layout& L, int f) {
  const int N = a.ranks(), r = a.rank();
  const std::uint64_t box = L.total - 16;
  for (int p = 1; p < N; ++p) a.post_write(mod(r + p, N), box, box + 8, 8, f);
  a.wait_flag(f, static_cast<std::uint64_t>(N - 1));
}
constexpr int kOpenBarrier = 12, kCloseBarrier = 13;
}  // namespace

void run_collective(accelerator_api& a, const CollectiveSpec& s) {
  const Layout L = layout(s, a.ranks());
  if (s.op == Op::allreduce && s.algorithm == "nccl_shm" && a.host_rank() < 0)
    throw std::invalid_argument("nccl_shm needs host memory (a fabric with a PCIe host); this fabric has none");
  if (L.total > a.memory_bytes())
    throw std::out_of_range("collective needs " + std::to_string(L.total) + " B of memory, rank has " +
                            std::to_string(a.memory_bytes()));
  const std::uint64_t T = s.bytes;
  const bool barriers = s.fabric_barriers && s.op == Op::allreduce && one_shot(s.algorithm);
  if (barriers) fabric_barrier(a, L, kOpenBarrier);
  switch (s.op) {
    case Op::allreduce:
      if (s.algorithm == "ring")
        allreduce_ring(a, L, T, false);
      else if (s.algorithm == "ring-sync")
        allreduce_ring(a, L, T, true);
      else if (s.algorithm == "oneshot-push")
        allreduce_oneshot(a, L, T, "push");
      else if (s.algorithm == "oneshot-pull")
        allreduce_oneshot(a, L, T, "pull");
      else if (s.algorithm == "phased-push")
        allreduce_oneshot(a, L, T, "phased");
      else if (s.algorithm == "tree")
        allreduce_tree(a, L, T);
      // GPU transports (host-bridge.md §4)
      else if (s.algorithm == "pull")
        allreduce_oneshot(a, L, T, "pull");
      else if (s.algorithm == "full")
        allreduce_oneshot(a, L, T, "push");
      else if (s.algorithm == "write_ring")
        allreduce_ring(a, L, T, false);
      else if (s.algorithm == "full_phased")
        allreduce_full_phased(a, L, T);
      else if (s.algorithm == "payload_rsag")
        allreduce_payload_rsag(a, L, T, false);
      else if (s.algorithm == "payload_rsag_phased")
        allreduce_payload_rsag(a, L, T, true);
      else if (s.algorithm == "bulk_pull")
        allreduce_bulk_pull(a, L, chunks_of(s));
      else if (s.algorithm == "bulk_push")
        allreduce_bulk_push(a, L, chunks_of(s));
      else if (s.algorithm == "bulk_push_phased")
        allreduce_bulk_push_phased(a, L, chunks_of(s));
      else if (s.algorithm == "nccl_ll")
        allreduce_nccl_ll(a, L, T);
      else if (s.algorithm == "nccl_simple_read")
        allreduce_nccl_simple_read(a, L, T);
      else if (s.algorithm == "nccl_shm")
        allreduce_nccl_shm(a, L, T);
      else
        throw std::logic_error("allreduce algorithm '" + s.algorithm + "' has no implementation");
      break;
    case Op::reduce_scatter: reduce_scatter(a, L, T, s.algorithm); break;
    case Op::allgather: all_gather(a, L, T, s.algorithm); break;
    case Op::alltoall: all_to_all(a, L, T, s.algorithm); break;
    case Op::broadcast: broadcast(a, L, T, s); break;
    case Op::sendrecv: send_recv(a, L, T, s.algorithm); break;
    case Op::custom: throw std::logic_error("a custom collective has no built-in algorithm");
  }
  if (barriers) {
    fabric_barrier(a, L, kCloseBarrier);
    a.wait_all();
  }
}

double busbw_factor(Op op, int N) {
  switch (op) {
    case Op::allreduce: return 2.0 * (N - 1) / N;
    case Op::reduce_scatter:
    case Op::allgather:
    case Op::alltoall: return static_cast<double>(N - 1) / N;
    case Op::broadcast:
    case Op::sendrecv:
    case Op::custom: return 1.0;
  }
  return 1.0;
}

namespace {
// Reduction inputs are 1 + (rank + i) mod kReduceModulus: every partial sum of
// up to 65,536 ranks (the largest fabric) is an integer of at most 251 x 2^16
// < 2^24, exactly representable in float32, so any summation order gives the
// exact sum (collectives.md, "Correctness").
constexpr std::uint64_t kReduceModulus = 251;

// sum over t in [0, b) of (1 + (s + t) mod M), for s < M and b <= M.
std::uint64_t cyclic_run(std::uint64_t s, std::uint64_t b) {
  const std::uint64_t M = kReduceModulus;
  if (s + b <= M) return b * (2 * s + b + 1) / 2;  // s+1 .. s+b
  const std::uint64_t wrap = b - (M - s);          // then 1 .. wrap
  return (M * (M + 1) - s * (s + 1)) / 2 + wrap * (wrap + 1) / 2;
}

// sum over q in [0, N) of 1 + (q + i) mod M.
std::uint64_t reduction_sum(int N, std::uint64_t i) {
  const std::uint64_t M = kReduceModulus, n = static_cast<std::uint64_t>(N);
  return (n / M) * (M * (M + 1) / 2) + cyclic_run(i % M, n % M);
}
}  // namespace

float input_value(Op op, int rank, std::uint64_t i) {
  if (op == Op::allreduce || op == Op::reduce_scatter)
    return static_cast<float>(1 + (static_cast<std::uint64_t>(rank) + i) % kReduceModulus);
  return static_cast<float>((rank + 1) * ((i % 13) + 1));  // <= 65536 x 13 < 2^24: exact
}

float expected_value(const CollectiveSpec& s, int N, int r, std::uint64_t i) {
  const std::uint64_t C = s.bytes / 4 / N;  // elements per chunk
  switch (s.op) {
    case Op::allreduce: return static_cast<float>(reduction_sum(N, i));
    case Op::reduce_scatter: return static_cast<float>(reduction_sum(N, r * C + i));
    case Op::allgather: return input_value(s.op, static_cast<int>(i / C), i % C);
    case Op::alltoall: return input_value(s.op, static_cast<int>(i / C), r * C + i % C);
    case Op::broadcast: return input_value(s.op, s.root, i);
    case Op::sendrecv: return input_value(s.op, mod(r - 1, N), i);
    case Op::custom: return 0;  // no definition (check_outputs does not check a custom schedule)
  }
  return 0;
}

}  // namespace fabricsim::sw
