#pragma once
// The decode-round program of a PCIe host run (host-bridge.md §6,
// collectives.md §5-§6): software on every GPU that selects a transport per
// AllReduce size once at start-up (a ladder, the fabric class, or a race of
// candidates timed on the fabric), then runs decode rounds of compute gaps
// and AllReduces. It reaches the fabric only through models::accelerator_api;
// the harness that elaborates the host, starts it and reports is
// platform/sim/host_run.
#include <cstdint>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"
#include "sw/collectives.h"
#include "sw/selection.h"

namespace fabricsim::sw {

/// Decode-round workload with transport selection: per round, `layers` x
/// (compute gap, then one AllReduce of each size in `allreduces`); the
/// transport of each size comes from the selection policy, decided once at
/// start-up.
struct DecodeSpec {
  Selection selection = Selection::race_median;
  std::vector<std::uint64_t> allreduces{80 * 1024};  ///< bytes per GPU, per layer
  std::uint32_t layers = 8;
  std::uint64_t compute_ps = 20'000'000;         ///< gap before each AllReduce
  std::vector<std::string> candidates;           ///< race candidates
  bool drop_reads_when_crossing = false;         ///< race: drop read modes if the group spans quadrants
  std::uint64_t race_window_ps = 2'000'000'000;  ///< per candidate and size
  bool random_start_phase = true;                ///< start at a seed-derived phase of the stall period (harness)
  Ladder ladder, switch_local, quadrant_crossing;
};

/// What one run of the program needs besides the spec (same on every GPU).
struct DecodeRun {
  DecodeSpec spec;
  Layout layout;                   ///< GPU memory layout: input at layout.in, layout.in_bytes
  bool data = false;               ///< fill the input with real values first
  std::uint64_t max_rounds = 0;    ///< > 0: exactly this many rounds, else rounds until cell_ps after selection
  std::uint64_t cell_ps = 0;       ///< length of the rounds' phase
  std::uint64_t barrier_ps = 0;    ///< cost of the cross-GPU start barrier inside every AllReduce
  std::uint64_t chunk_bytes = 0;   ///< bulk transports' chunk
  bool kernel_barriers = false;    ///< one-shot transports open and close with flag barriers
  bool crossing = false;           ///< the group spans quadrants (fabric class, read-mode filter)
  int ranks = 0;                   ///< GPUs in the group
};

/// State shared by the GPUs of one run (written by rank 0 where noted).
struct DecodeState {
  std::vector<std::string> transport;                         ///< per allreduce size index (every rank)
  std::vector<std::vector<std::vector<std::uint64_t>>> race;  ///< [candidate][rank][op] of the size being raced, ps
  std::vector<std::string> race_log;  ///< "<bytes>B: cand=median/mean us(ops) ..." per raced size (rank 0)
  std::vector<std::uint64_t> round_ps;  ///< duration of every round (rank 0)
  std::uint64_t selection_end_ps = 0;   ///< when selection ended (rank 0)
};

/// One GPU's program: fill the input (data), select a transport per
/// AllReduce size (ladder, fabric class, or a race: each candidate back to
/// back for race_window_ps, then the pick by the policy's statistic of the
/// per-operation slowest GPU), then decode rounds until max_rounds or
/// cell_ps after selection. `st.transport` must have one entry per size.
void decode_program(models::accelerator_api& a, DecodeState& st, const DecodeRun& run);

/// One operation as the harness times it: flags reset behind barriers, then
/// the start barrier's cost and the collective. Returns this GPU's time, ps.
std::uint64_t timed_op(models::accelerator_api& a, const CollectiveSpec& spec, std::uint64_t barrier_ps);

}  // namespace fabricsim::sw
