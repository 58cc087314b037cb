#pragma once
// SystemC TLM-2.0 (loosely timed) wrapper of one UALink-style link direction
// pair. Protocol logic: models/link/core/link_engine.h.
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/link/core/link_engine.h"
#include "models/link/flit_burst_ext.h"

namespace fabricsim::models {

/// UALink-style port: owns the forward direction of one link (serializer,
/// TxReplay, FEC, burst channel, in-order receiver) and its reverse control
/// direction (cumulative ACKs, replay requests).
///
/// Sockets:
///  - `in`  (target): the owner posts payload flits as TLM WRITE bursts with a
///    flit_burst_ext giving each flit's arrival time; data_length must be a
///    multiple of the flit size. The call returns once the flits are accepted
///    (posted write); the annotated delay moves the caller to the last flit's
///    arrival time. The payload is either real bytes (non-null data pointer:
///    carried and delivered) or only per-flit tags (null data pointer, one
///    tag per flit: no byte is stored or copied); the first burst fixes which,
///    for the whole stream.
///  - `out` (initiator): flits delivered in order at the far end, forwarded as
///    WRITE bursts with delivery times in flit_burst_ext (address = first
///    flit's sequence number x flit size), their tags if the owner gave tags,
///    and their bytes if it gave bytes (else a null data pointer).
///
/// Cost per flit: O(1), no allocation in steady state (the engine keeps no
/// per-flit record; buffers are reused).
///
/// The data-link machine runs in its own local time inside b_transport: no
/// SystemC event per flit. Errors: a burst without extension, with a size not
/// a multiple of the flit, with neither bytes nor one tag per flit, switching
/// between bytes and tags mid-stream, or with arrival times going backwards gets
/// TLM_GENERIC_ERROR_RESPONSE; a run that cannot finish raises SC_REPORT_ERROR
/// with the engine's diagnosis (port name, sequence numbers, state).
class ualink_port : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<ualink_port> in;
  tlm_utils::simple_initiator_socket<ualink_port> out;

  /// cfg: link parameters (policy by cfg.policy_name); seed and link_id key
  /// the burst channel's stream; deadline_ps bounds simulated time (watchdog).
  ualink_port(const sc_core::sc_module_name& name, const link::LinkConfig& cfg, std::uint64_t seed,
              std::uint64_t link_id, std::uint64_t deadline_ps);
  ualink_port(const ualink_port&) = delete;
  ualink_port& operator=(const ualink_port&) = delete;

  const link::LinkEngine& engine() const { return engine_; }
  /// Observe every forward transmission (traces); call before the simulation.
  void set_tx_observer(link::LinkEngine::TxObserver f) { engine_.set_tx_observer(std::move(f)); }
  /// A long run's progress: (now ps, flits delivered) every 2^12 engine events; call before the simulation.
  void set_progress_hook(link::LinkEngine::ProgressHook f) { engine_.set_progress_hook(std::move(f)); }
  /// Record each flit's first serialization start (engine().first_transmission_time, valid inside the
  /// delivery observer's call for that flit); call before the simulation.
  void record_first_transmissions() { engine_.set_record_first_transmissions(true); }
  /// Called at each in-order delivery with (sequence number, delivery time ps), in delivery order, while
  /// the link runs (before the flit is forwarded to `out`); for measurements that need no per-flit record.
  using DeliveryObserver = std::function<void(std::uint64_t seq, link::ps_t t)>;
  void set_delivery_observer(DeliveryObserver f) { on_delivery_ = std::move(f); }
  /// Engine status after end of stream; done unless the link went down or stuck.
  link::LinkEngine::Status status() const { return engine_.status(); }
  std::string diagnosis() const;

 private:
  void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  void forward_delivered();

  link::LinkEngine engine_;
  std::uint64_t deadline_ps_;
  /// Stop the simulation with the watchdog's diagnosis (SC_REPORT_ERROR).
  void report_deadline();
  std::uint32_t flit_bytes_;
  enum class Payload { unknown, bytes, tags, both } payload_ = Payload::unknown;  // fixed by the first burst
  std::vector<unsigned char> data_;  // bytes mode: data_[data_head_..] = payload of undelivered flits
  std::size_t data_head_ = 0;
  link::RingQueue<std::uint64_t> tags_;  // tags of undelivered flits, in sequence order
  std::uint64_t forwarded_ = 0;          // flits delivered to `out` so far
  flit_burst_ext out_ext_;               // delivered, not yet forwarded: times (from the engine's hook), tags
  tlm::tlm_generic_payload out_tx_;      // reused for every forwarded burst
  DeliveryObserver on_delivery_;
};

}  // namespace fabricsim::models
