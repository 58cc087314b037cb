#pragma once
// Executor of users' schedules (sw/schedule.h) over the accelerator software
// interface only (models::accelerator_api). Semantics: docs/collectives.md,
// "Step semantics".
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"
#include "sw/schedule.h"

namespace fabricsim::sw {

/// Where one step's message goes or comes from.
struct StepPlan {
  std::uint64_t rx_addr = 0;  ///< receiving step: staging slot of its message in local memory
  std::uint64_t rx_seq = 0;   ///< receiving step: 0-based index of its message on its connection
  std::uint64_t rx_need = 0;  ///< receiving step: flag value once its message has landed (its pieces)
  int rx_flag = -1;           ///< receiving step: local flag of its message (one per message received), counting its landed pieces
  int tx_peer = -1;           ///< sending step: schedule rank it sends to
  std::uint64_t tx_addr = 0;  ///< sending step: staging slot at the peer
  int tx_flag = -1;           ///< sending step: the peer's flag for the connection
};

/// Buffers of one schedule rank, byte addresses in local memory.
struct ScheduleRankLayout {
  std::uint64_t in = 0, out = 0, scratch = 0, staging = 0, total = 0;
  std::uint64_t in_bytes = 0, out_bytes = 0, scratch_bytes = 0;
};

/// A schedule laid out for one size: chunk bytes, each rank's buffers and one
/// staging slot per received message (senders never wait for room), the
/// pairing of every send with its receive, and the flags needed.
struct ScheduleLayout {
  std::uint64_t bytes = 0, chunk = 0;
  std::vector<ScheduleRankLayout> ranks;
  std::vector<std::vector<std::vector<StepPlan>>> steps;  ///< [rank][threadblock][step]
  std::uint32_t flags = 8;                                ///< flags per rank (one per message received, at least 8)
  std::uint64_t piece_bytes = 0;                          ///< a message moves as writes of at most this (0: one write)
  std::uint64_t memory_bytes = 0;                         ///< max over ranks of total
};

/// Lay out validated schedule `s` for nccl-tests size `bytes` (check_run()
/// done). Layout per rank: input, output, scratch, then the staging slots.
/// In place (s.inplace): AllReduce / AllToAll / Broadcast output is the
/// input; AllGather input is output chunk block r; ReduceScatter output is
/// input block r. `piece_bytes` > 0 (a multiple of 4): a message moves as
/// posted writes of at most that many bytes, each posted once its
/// threadblock has streamed it (threadblock rate on); 0: one write.
ScheduleLayout layout_schedule(const Schedule& s, std::uint64_t bytes, std::uint64_t piece_bytes = 0);

/// Piece size used when any accelerator has a threadblock rate: 64 KiB.
constexpr std::uint64_t kRatePieceBytes = 64 * 1024;

/// Timing of one step (ps): `start` when it became its threadblock's current
/// step, `ready` when its dependency and its message (if it receives) were
/// there, `end` when it finished (a send: when its posted write was handed to
/// the fabric, or streamed at the threadblock rate), `landed` (sends) when
/// its data had landed at the peer. `cause`: what set `ready` (0 previous
/// step, 1 depid/deps, 2 the message).
struct StepRecord {
  std::uint64_t start = 0, ready = 0, end = 0, landed = 0;
  int cause = 0;
};
/// [threadblock][step] of one rank.
using RankRecords = std::vector<std::vector<StepRecord>>;

/// Options of the executor.
struct ExecOptions {
  /// Schedule rank -> accelerator rank (`workload.rank_map`); empty: identity.
  std::vector<int> fabric_rank;
};

/// Run schedule rank `rank` of `s` on the calling accelerator (from its
/// thread). Threadblocks run concurrently, steps in order within one, a step
/// with depid / deps waits for that step of that threadblock. Input at
/// layout.ranks[rank].in, result at .out. Uses flags 0..layout.flags-1 and
/// expects them at 0 on entry. Fills `records` if not null. Throws
/// std::out_of_range when the rank's memory is smaller than the layout.
void run_schedule(models::accelerator_api& a, const Schedule& s, const ScheduleLayout& layout, int rank,
                  const ExecOptions& opt = {}, RankRecords* records = nullptr);

/// First wrong output element of `s` against the collective's definition
/// (input_value / expected_value of collectives.h), over every rank's output
/// `out[r]` (float32, layout.ranks[r].out_bytes / 4 values). Empty if right,
/// else "rank R chunk K (element E): expected X, got Y". Empty for a
/// custom schedule (Op::custom: nothing to check against).
std::string check_outputs(const Schedule& s, const ScheduleLayout& layout, const std::vector<const float*>& out,
                          int root = 0);

/// The chain of steps that set the completion time: from the last step to
/// finish back through what made each step ready (its previous step, its
/// depid / deps, or the send whose message it waited for). One entry per
/// step: rank, threadblock, step.
struct PathStep {
  int rank, tb, step;
};
std::vector<PathStep> critical_path(const Schedule& s, const std::vector<RankRecords>& rec);

}  // namespace fabricsim::sw
