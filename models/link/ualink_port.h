#pragma once
// SystemC TLM-2.0 (loosely timed) wrapper of one UALink-style link direction
// pair. Protocol logic: models/link/core/link_engine.h.
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/link/core/link_engine.h"

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
///    arrival time.
///  - `out` (initiator): flits delivered in order at the far end, forwarded as
///    WRITE bursts with delivery times in flit_burst_ext (address = first
///    flit's sequence number x flit size).
///
/// The data-link machine runs in its own local time inside b_transport: no
/// SystemC event per flit. Errors: a burst without extension, with a size not
/// a multiple of the flit, or with arrival times going backwards gets
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
  /// Engine status after end of stream; done unless the link went down or stuck.
  link::LinkEngine::Status status() const { return engine_.status(); }
  std::string diagnosis() const;

 private:
  void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  void forward_delivered();

  link::LinkEngine engine_;
  std::uint64_t deadline_ps_;
  std::uint32_t flit_bytes_;
  std::vector<unsigned char> data_;   // payload of flits not yet delivered
  std::uint64_t data_first_seq_ = 0;  // seq of data_[0]
  std::uint64_t forwarded_ = 0;       // flits delivered to `out` so far
};

}  // namespace fabricsim::models
