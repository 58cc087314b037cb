#pragma once
// The timing core interface the fabric kernel drives: a sequential
// discrete-event model of how long transfers take between ranks. Two
// implementations: FabricEngine (UALink-style links, flit by flit, with
// replay and FEC) and pcie::PcieEngine (PCIe host: switches, host bridges,
// IO-die quadrants, in TLP bursts). Plain C++, no SystemC.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/link/core/types.h"

namespace fabricsim::fabric_core {

using link::ps_t;

/// What a transfer is, for cores whose timing depends on it (PCIe ordering
/// and read-completion stalls); cores that move flits ignore it.
enum class TransferKind : std::uint8_t {
  write,            ///< posted write (data from src to dst)
  read_request,     ///< non-posted read request (header only, src = requester)
  read_completion,  ///< completion data of a read (src = target, dst = requester)
};

/// A finished transfer: all its data has arrived at the destination.
struct Completion {
  std::uint64_t transfer = 0;
  std::uint64_t cookie = 0;  ///< caller's tag
  ps_t time_ps = 0;
};

/// Timing core of a fabric. Ranks are endpoint ids (accelerators, and host
/// memory where a core has it). Errors: std::invalid_argument for a bad post
/// (unknown rank, src == dst, time before horizon()).
class TimingCore {
 public:
  virtual ~TimingCore() = default;
  /// Inject a transfer of `bytes` at time t_ps (>= horizon()); returns its id.
  virtual std::uint64_t post(int src_rank, int dst_rank, std::uint64_t bytes, ps_t t_ps, std::uint64_t cookie,
                             TransferKind kind = TransferKind::write) = 0;
  /// Process events with time < limit_ps in time order; stop after the first
  /// instant at which transfers complete (appending them to `out`). Returns
  /// the horizon: every event before it has been processed.
  virtual ps_t run(ps_t limit_ps, std::vector<Completion>& out) = 0;
  /// Earliest pending event (link::kNever if none).
  virtual ps_t next_event_time() = 0;
  virtual ps_t horizon() const = 0;
  /// Time of the last event processed.
  virtual ps_t now() const = 0;
  /// >= 0: a link direction went down (a terminal failure); -1: none.
  virtual int failed_direction() const { return -1; }
  /// True once a link can make no progress (a RIFL link's watchdog): the run
  /// cannot finish and ends with a diagnosis (unlike a link that went down,
  /// which is a result).
  virtual bool stalled() const { return false; }
  /// Multi-line state dump for deadlock and deadline diagnoses.
  virtual std::string diagnosis() const = 0;
  /// Called with the core's time every so many events inside run() (a long
  /// stretch without a completion still shows progress); no effect on
  /// results. Default: a core that never calls it.
  using ProgressHook = std::function<void(ps_t now_ps)>;
  virtual void set_progress_hook(ProgressHook) {}
};

}  // namespace fabricsim::fabric_core
