#pragma once
// Users' collective schedules (collectives.md §7, docs/collectives.md
// "Schedules"): one in-memory form for MSCCL XML (what msccl-tools / MSCCLang
// emit) and fabricsim's native YAML form, its loaders and its validator.
// Plain C++: no SystemC. The executor is in sw/schedule_exec.h.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sw/collectives.h"

namespace fabricsim::sw {

/// A malformed or inconsistent schedule. what() is one line,
/// "FILE:LINE: what is wrong" (LINE of the element or YAML key concerned).
struct ScheduleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// MSCCL buffers: input `i`, output `o`, scratch `s`.
enum class Buf { input, output, scratch };

/// MSCCL step types (collectives.md §7). Peers: a threadblock's `send` and
/// `recv` ranks.
enum class StepType {
  send,                   ///< s:    send src to the send peer
  recv,                   ///< r:    receive from the recv peer into dst
  recv_copy_send,         ///< rcs:  receive into dst and send it on
  recv_reduce_copy,       ///< rrc:  dst = src + received
  recv_reduce_send,       ///< rrs:  send src + received on (nothing stored)
  recv_reduce_copy_send,  ///< rrcs: dst = src + received, and send it on
  reduce,                 ///< re:   dst += src (local)
  copy,                   ///< cpy:  dst = src (local)
  nop,                    ///< nop:  no data, dependencies only
};

/// "s" -> StepType::send, ...; false for an unknown name.
bool parse_step_type(const std::string& name, StepType& out);
std::string to_string(StepType t);
std::string to_string(Buf b);  ///< "i", "o", "s"
/// The step receives from the threadblock's recv peer (r, rcs, rrc, rrs, rrcs).
bool receives(StepType t);
/// The step sends to the threadblock's send peer (s, rcs, rrs, rrcs).
bool sends(StepType t);
/// The step reads `src` (s, rrc, rrs, rrcs, re, cpy).
bool reads_src(StepType t);
/// The step writes `dst` (r, rcs, rrc, rrcs, re, cpy).
bool writes_dst(StepType t);

struct ScheduleStep {
  int s = 0;  ///< index within its threadblock (steps run in this order)
  StepType type = StepType::nop;
  Buf srcbuf = Buf::input, dstbuf = Buf::output;
  std::uint64_t srcoff = 0, dstoff = 0;  ///< chunks
  std::uint64_t cnt = 1;                 ///< chunks
  int depid = -1;                        ///< threadblock (index on the same GPU) this step waits for, -1 none
  int deps = -1;                         ///< that threadblock's step
  bool hasdep = false;
  bool hasdep_zero = false;  ///< the file said hasdep="0" (MSCCL XML; for the warning of Schedule::warnings)
  int line = 0;
};

struct ScheduleThreadblock {
  int id = 0;
  int send = -1, recv = -1;  ///< peer ranks, -1 none
  int chan = 0;              ///< channel: connections with the same peers but another channel are independent
  int line = 0;
  std::vector<ScheduleStep> steps;
};

struct ScheduleGpu {
  int id = 0;
  std::uint64_t i_chunks = 0, o_chunks = 0, s_chunks = 0;
  int line = 0;
  std::vector<ScheduleThreadblock> tbs;  ///< in id order (tbs[k].id == k)
};

/// One schedule (one MSCCL <algo>).
struct Schedule {
  std::string file;    ///< as given, for messages
  std::string format;  ///< "msccl-xml" or "yaml"
  std::string name;
  std::string coll;       ///< as written: allreduce, allgather, reducescatter, alltoall, ...
  Op op = Op::allreduce;  ///< the collective `coll` names
  /// False for an <algo> without `coll` (older MSCCL / SCCL files): the
  /// workload's collective names it (resolve_collective); `op` is unset until then.
  bool coll_given = true;
  std::string proto = "Simple";
  int nchannels = 1;
  std::uint64_t nchunksperloop = 1;
  int ngpus = 0;
  bool inplace = false;                        ///< run in place (output aliases input, collectives.md §7)
  std::uint64_t min_bytes = 0, max_bytes = 0;  ///< 0: no bound
  int line = 0;                                ///< of <algo> / the schedule key
  int coll_line = 0, ngpus_line = 0;
  std::vector<ScheduleGpu> gpus;  ///< in id order (gpus[r].id == r)
  /// What the file says that MSCCL's runtimes would treat differently from
  /// fabricsim, one message each with FILE:LINE (e.g. a dependency whose step
  /// says hasdep="0"); the run goes on, the CLI prints them as warnings.
  std::vector<std::string> warnings;
};

/// Parse MSCCL XML text (pugixml). `file` names the source in messages.
/// Throws ScheduleError for malformed XML (with its line), a missing or
/// non-numeric attribute, an unknown step type or buffer, an unknown `coll`.
/// `ngpus` absent: the number of <gpu> elements; `coll` absent: coll_given
/// is false (see resolve_collective).
Schedule parse_msccl_xml(const std::string& text, const std::string& file);

/// For a schedule without `coll`: the collective `op` (the workload's) is the
/// one it computes. No-op when the schedule names its own.
void resolve_collective(Schedule& s, Op op);

/// Parse the native YAML form (docs/collectives.md "Native YAML schedules").
/// Throws ScheduleError as parse_msccl_xml does, and for unknown keys.
Schedule parse_schedule_yaml(const std::string& text, const std::string& file);

/// Read `path` (.xml: MSCCL XML; .yaml / .yml: native), parse and validate().
/// Throws ScheduleError (also for a file that cannot be read).
Schedule load_schedule(const std::string& path);

/// The schedule in `text`, read from `path` (its extension picks the form, as
/// for load_schedule), parsed and validate()d. Throws ScheduleError.
Schedule parse_schedule(const std::string& text, const std::string& path);

/// Checks that need no fabric: ids dense and in order, peers in [0, ngpus)
/// and not the GPU itself, one threadblock per (send peer, channel) and per
/// (recv peer, channel), sending / receiving steps only on threadblocks with
/// that peer, offsets + counts inside the buffers' chunk counts, every send
/// matched by a receive of the same count (in step order, per connection),
/// depid / deps naming an existing step, and no cycle among a GPU's
/// dependencies (step order within a threadblock plus depid / deps).
/// Throws ScheduleError naming the line.
void validate(const Schedule& s);

/// Checks against a run: `ranks` accelerators (ngpus must equal it), the
/// workload's collective when given explicitly (`explicit_op`), the size
/// `bytes` (a multiple of 4 x nchunksperloop; each GPU's i_chunks / o_chunks
/// must give the collective's input / output sizes, collectives.h). Throws
/// ScheduleError naming the line.
void check_run(const Schedule& s, int ranks, const Op* explicit_op, std::uint64_t bytes);

/// Bytes per chunk for nccl-tests size `bytes`: bytes / nchunksperloop.
std::uint64_t chunk_bytes(const Schedule& s, std::uint64_t bytes);

/// Input and output bytes per rank of `op` for nccl-tests size T on N ranks
/// (collectives.h CollectiveSpec).
std::uint64_t op_in_bytes(Op op, std::uint64_t T, int N);
std::uint64_t op_out_bytes(Op op, std::uint64_t T, int N);

}  // namespace fabricsim::sw
