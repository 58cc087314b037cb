#pragma once
// Collective algorithms run by the accelerators' software (collectives.md).
// They reach the fabric only through models::accelerator_api: posted writes
// and reads, completion and flag waits, local reductions, a zero-cost barrier.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"

namespace fabricsim::sw {

enum class Op { allreduce, reduce_scatter, allgather, alltoall, broadcast };

/// "allreduce" -> Op::allreduce, ...; throws std::invalid_argument listing the valid names.
Op parse_op(const std::string& name);
std::string to_string(Op op);
/// Algorithms shipped for an operation, e.g. allreduce: ring, ring-sync,
/// oneshot-push, oneshot-pull, phased-push, tree.
const std::vector<std::string>& algorithms(Op op);

/// One collective call. `bytes` is nccl-tests' size: the full vector T
/// (AllReduce: T in and out per rank; ReduceScatter: T in, T/N out;
/// AllGather: T/N in, T out; AllToAll: T in and out; Broadcast: T). Data are
/// float32, so bytes must be a multiple of 4 x ranks.
struct CollectiveSpec {
  Op op = Op::allreduce;
  std::string algorithm = "ring";
  std::uint64_t bytes = 0;
  int root = 0;              ///< Broadcast
  int pipeline_chunks = 8;   ///< Broadcast ring: chunks in flight
};

/// Where a rank keeps its buffers (byte addresses in local memory).
struct Layout {
  std::uint64_t in = 0, out = 0, scratch = 0, total = 0;
  std::uint64_t in_bytes = 0, out_bytes = 0;
};

/// Buffers of `spec` on `ranks` ranks. Throws std::invalid_argument for an
/// unknown algorithm, a size not a multiple of 4 x ranks, or fewer than 2 ranks
/// (tree and broadcast-tree also need a power-of-two rank count).
Layout layout(const CollectiveSpec& spec, int ranks);

/// Run one collective on the calling rank (from its SystemC thread). Input is
/// at layout.in, the result at layout.out. Uses flags 0..5 and expects them at
/// 0 on entry: the caller resets them between collectives (behind barriers).
void run_collective(models::accelerator_api& acc, const CollectiveSpec& spec);

/// nccl-tests bus-bandwidth factor: AllReduce 2(N-1)/N, ReduceScatter,
/// AllGather and AllToAll (N-1)/N, Broadcast 1 (collectives.md §4).
double busbw_factor(Op op, int ranks);

/// Deterministic float32 input of rank r (small integers, so sums are exact).
float input_value(int rank, std::uint64_t index);
/// Expected output element `index` of rank r for `spec` on N ranks.
float expected_value(const CollectiveSpec& spec, int ranks, int rank, std::uint64_t index);

}  // namespace fabricsim::sw
