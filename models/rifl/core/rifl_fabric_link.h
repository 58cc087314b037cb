#pragma once
// A RIFL link between two nodes of a fabric (`link.protocol: rifl`): the
// link-protocol component the fabric's scheduler drives beside the UALink
// data-link machine (link::LinkEngine). Both directions of one bonded RIFL
// link (rifl_link.h, external-traffic mode: the same lanes, transmitter
// states, receiver flags, go-back-N, flow control and channel as the
// `rifl-link` experiment); a fabric flit is one RIFL packet, cut into frames
// round-robin over the lanes. Time: integer ps outside, frame slots inside
// (slot k starts at floor(k x frame_bits x 1e12 / lane_rate) ps). Plain C++.
#include <cstdint>
#include <functional>
#include <string>

#include "models/link/core/ring_queue.h"
#include "models/link/core/types.h"
#include "models/rifl/core/rifl_link.h"

namespace fabricsim::rifl {

using link::ps_t;

/// Counters of one direction at the component boundary (flits = packets).
struct FlitCounters {
  std::uint64_t offered = 0, admitted = 0, delivered = 0;
  ps_t admission_stall_credit_ps = 0;  ///< time a due head flit waited for a credit (back-pressure)
  std::uint64_t late_offers = 0;       ///< offers before the link's current slot (moved to it; 0 when driven right)
};

/// Both directions of one RIFL link in a fabric (direction 0 = end A -> end B).
///
/// offer() a flit at t (>= the time of the event being processed); it waits
/// in the direction's admission queue until a credit of the far node's
/// receive buffer is available (`credits` flits, 0 = unlimited; back-pressure
/// stays at the component boundary, as for UALink links), then enters the
/// RIFL transmitter as one packet of `flit_bytes` payload at the first slot
/// starting at or after that time. It is delivered (the hook is called) at
/// the end of the slot in which its last frame is decoded and reordered.
/// next_event_time() / step() let a scheduler interleave the link with other
/// components in global time order. Errors: std::invalid_argument (derive())
/// for an impossible RiflConfig or a lane rate outside [1 b/s, 1 Pb/s]
/// (slots are timed at the lane rate rounded to a whole number of b/s).
class FabricRiflLink {
 public:
  FabricRiflLink(RiflConfig cfg, std::uint32_t flit_bytes, std::uint32_t credits);

  /// Offer one flit in direction `dir` at t_ps.
  void offer(int dir, ps_t t_ps);
  /// A credit of direction `dir` is back at its transmitter at t_ps
  /// (non-decreasing per direction).
  void return_credit(int dir, ps_t t_ps);
  /// Earliest pending event: a delivery, an admission, or the next slot while
  /// a flit is on the link (link::kNever if nothing is pending).
  ps_t next_event_time() const;
  /// Process the events at P = next_event_time(): the slots that start
  /// before P, the deliveries at P, then the admissions at P (an offer at t
  /// enters the first slot starting at or after t); then run ahead through
  /// the slots that start before `bound_ps` (the earliest instant another
  /// component may act; every event before it must be processed elsewhere),
  /// stopping at the first slot in which a flit completes. No-op if nothing
  /// is pending.
  void step(ps_t bound_ps);
  /// True once the link cannot go on (no progress for the watchdog's limit,
  /// flow-control overflow); diagnosis() says why.
  bool failed() const { return link_.status() != RiflLink::Status::running; }
  std::string diagnosis() const;

  using DeliveryHook = std::function<void(int dir, ps_t t)>;
  using AdmitHook = std::function<void(int dir, ps_t t)>;
  void set_delivery_hook(DeliveryHook f) { on_deliver_ = std::move(f); }
  void set_admit_hook(AdmitHook f) { on_admit_ = std::move(f); }

  /// Flits offered but not yet admitted into the transmitter (the output queue).
  std::uint64_t waiting(int dir) const { return arrivals_[dir].size(); }
  /// Credits available at the last event (unlimited: UINT32_MAX).
  std::uint32_t credits(int dir) const { return credits_on_ ? credits_[dir] : ~0u; }
  const FlitCounters& counters(int dir) const { return fc_[dir]; }
  const RiflLink& link() const { return link_; }
  /// The RIFL link itself (tests: error scripts, observers; set before the first offer).
  RiflLink& link() { return link_; }
  ps_t now() const { return now_; }
  /// Start of frame slot k, ps.
  ps_t slot_start_ps(std::uint64_t k) const;
  /// First slot starting at or after t_ps.
  std::uint64_t slot_at_or_after(ps_t t_ps) const;
  /// One-way delay (transceiver + propagation, whole slots) + one slot, ps:
  /// what a credit or flow-control signal takes back over the reverse lanes.
  ps_t signal_delay_ps() const;

 private:
  ps_t next_admission(int dir) const;
  void admit(ps_t t);
  void run_until(std::uint64_t until_slot);

  RiflLink link_;
  std::uint32_t flit_bytes_;
  std::uint64_t slot_num_, slot_den_;  // slot = num / den ps
  bool credits_on_;
  std::uint32_t credits_[2];
  link::RingQueue<ps_t> arrivals_[2];
  link::RingQueue<ps_t> credit_returns_[2];
  link::RingQueue<std::pair<int, ps_t>> deliveries_;
  FlitCounters fc_[2];
  ps_t stall_since_[2] = {link::kNever, link::kNever};  // head due without a credit since
  ps_t now_ = 0;
  DeliveryHook on_deliver_;
  AdmitHook on_admit_;
};

}  // namespace fabricsim::rifl
