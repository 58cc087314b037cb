#pragma once
// Collective algorithms run by the accelerators' software (collectives.md).
// They reach the fabric only through models::accelerator_api: posted writes
// and reads, completion and flag waits, local reductions, a zero-cost barrier.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"

namespace fabricsim::sw {

/// sendrecv: point-to-point (the transport report's data-movement probes).
/// custom: a user's schedule that computes no standard collective (MSCCL
/// coll="custom"): its buffers are its chunk counts, no definition to check
/// the result against, no built-in algorithm.
enum class Op { allreduce, reduce_scatter, allgather, alltoall, broadcast, sendrecv, custom };

/// "allreduce" -> Op::allreduce, ...; throws std::invalid_argument listing the valid names.
Op parse_op(const std::string& name);
std::string to_string(Op op);
/// Algorithms shipped for an operation, e.g. allreduce: ring, ring-sync,
/// oneshot-push, oneshot-pull, phased-push, tree, then the GPU transports of
/// host-bridge.md §4: pull, bulk_pull, full, payload_rsag, bulk_push,
/// full_phased, payload_rsag_phased, bulk_push_phased, write_ring, nccl_ll,
/// nccl_simple_read, nccl_shm. sendrecv: write, read.
const std::vector<std::string>& algorithms(Op op);

/// One collective call. `bytes` is nccl-tests' size: the full vector T
/// (AllReduce: T in and out per rank; ReduceScatter: T in, T/N out;
/// AllGather: T/N in, T out; AllToAll: T in and out; Broadcast: T;
/// SendRecv: T in and out). Data are float32, so bytes must be a multiple of
/// 4 x ranks.
struct CollectiveSpec {
  Op op = Op::allreduce;
  std::string algorithm = "ring";
  std::uint64_t bytes = 0;
  int root = 0;             ///< Broadcast
  int pipeline_chunks = 8;  ///< Broadcast ring: chunks in flight
  /// AllReduce bulk_pull, bulk_push, bulk_push_phased: bytes per chunk, a
  /// positive multiple of 4 (the last chunk of T takes the remainder; a chunk
  /// larger than T means one chunk of T).
  std::uint64_t chunk_bytes = 256ull << 10;
  /// One-shot AllReduce transports (pull, bulk_pull, full, payload_rsag,
  /// bulk_push and their phased forms): open and close with a barrier of
  /// 8-byte flag writes to every peer over the fabric (flags 12 and 13), as
  /// GPU one-shot kernels do so that peers' buffers are ready before they are
  /// read or written and free again after. Off: the zero-cost harness barrier
  /// stands for both.
  bool fabric_barriers = false;
};

/// Where a rank keeps its buffers (byte addresses in local memory).
struct Layout {
  std::uint64_t in = 0, out = 0, scratch = 0, total = 0;
  std::uint64_t in_bytes = 0, out_bytes = 0;
};

/// Buffers of `spec` on `ranks` ranks. Throws std::invalid_argument for an
/// unknown algorithm, a size not a multiple of 4 x ranks, fewer than 2 ranks
/// (tree and broadcast-tree also need a power-of-two rank count), or, for the
/// bulk algorithms, a chunk_bytes that is 0 or not a multiple of 4.
Layout layout(const CollectiveSpec& spec, int ranks);

/// Bytes of host memory `spec` uses on `ranks` ranks, from host address 0:
/// AllReduce nccl_shm stages through host memory, rank r owning
/// [r S, (r + 1) S) with S = 2 T / N (two staging slots of one ring chunk),
/// so ranks x S = 2 T in all; every other algorithm uses none (0). Throws as
/// layout() does.
std::uint64_t host_bytes(const CollectiveSpec& spec, int ranks);

/// Run one collective on the calling rank (from its SystemC thread). Input is
/// at layout.in, the result at layout.out. Uses flags 0..11 and expects them
/// at 0 on entry: the caller resets them between collectives (behind
/// barriers). Throws std::invalid_argument for nccl_shm when the fabric has no
/// host memory (acc.host_rank() < 0), std::out_of_range when the rank's memory
/// is smaller than layout().total.
void run_collective(models::accelerator_api& acc, const CollectiveSpec& spec);

/// nccl-tests bus-bandwidth factor: AllReduce 2(N-1)/N, ReduceScatter,
/// AllGather and AllToAll (N-1)/N, Broadcast and SendRecv 1 (collectives.md §4).
double busbw_factor(Op op, int ranks);

/// Deterministic float32 input element `index` of rank r for collective `op`.
/// AllReduce and ReduceScatter: 1 + (r + index) mod 251, so that every partial
/// sum over up to 65,536 ranks stays an integer below 2^24 and is exact in
/// float32 in any summation order (the check is exact by construction).
/// Other collectives only move data: (r + 1) x (index mod 13 + 1), distinct
/// for every rank.
float input_value(Op op, int rank, std::uint64_t index);
/// Expected output element `index` of rank r for `spec` on N ranks (SendRecv:
/// the input of rank (r - 1) mod N).
float expected_value(const CollectiveSpec& spec, int ranks, int rank, std::uint64_t index);

}  // namespace fabricsim::sw
