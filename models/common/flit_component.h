#pragma once
// The boundary between the fabric's scheduler (models/fabric/core/
// fabric_engine.h) and a component that sits at a node of the fabric and
// forwards flits (a UALink switch, models/switch/core/switch_core.h). The
// scheduler owns the link directions (one LinkEngine each: TxReplay,
// receiver, FEC, channel) and the event order; the component owns what
// happens between its input and output ports. Plain C++, no SystemC.
#include <cstdint>
#include <ostream>

#include "models/link/core/types.h"

namespace fabricsim::common {

using link::ps_t;

/// A flit as components see it: the transfer it belongs to (the scheduler's
/// id, opaque to a component) and the accelerator rank it is addressed to.
struct FlitTag {
  std::uint64_t transfer = 0;
  std::int32_t dst_rank = -1;
};

/// The link directions around one node, as its component drives them
/// (implemented by the scheduler).
class NodeLinks {
 public:
  virtual ~NodeLinks() = default;
  /// Offer `tag` to the transmitter of output port `port` at t_ps (>= the
  /// time of the event being processed); it enters that port's admission
  /// queue (the output queue) and is admitted into TxReplay when the link's
  /// window and credits allow. Throws std::logic_error for a port without a link.
  virtual void send(std::uint32_t port, ps_t t_ps, const FlitTag& tag) = 0;
  /// Give one receive-buffer credit back to the transmitter that feeds input
  /// port `port`: the slot was freed at t_ps; the link adds its control delay
  /// (control_base_delay + propagation) before the transmitter may use it.
  virtual void return_credit(std::uint32_t port, ps_t t_ps) = 0;
};

/// A component at the far end of link directions.
class FlitComponent {
 public:
  virtual ~FlitComponent() = default;
  /// Number of ports (a link on a port >= this is an elaboration error).
  virtual std::uint32_t ports() const = 0;
  /// Attach the links around the node (once, at elaboration, before any flit).
  virtual void bind(NodeLinks& links) = 0;
  /// A flit was delivered in order on input port `port` at t_ps (after FEC
  /// decode: the receiver has it in full).
  virtual void receive(std::uint32_t port, ps_t t_ps, const FlitTag& tag) = 0;
  /// Output port `port`'s transmitter admitted one flit of its admission
  /// queue into TxReplay at t_ps (the output queue shrank by one).
  virtual void admitted(std::uint32_t port, ps_t t_ps) = 0;
  /// Most flits input port `port` held at once (links.csv max_input_buffer).
  virtual std::uint64_t max_input_flits(std::uint32_t port) const = 0;
  /// Lines of state worth a diagnosis (blocked inputs), at most `max_lines`,
  /// each starting with "\n  "; returns the number written.
  virtual std::size_t dump_blocked(std::ostream& os, std::size_t max_lines) const = 0;
};

}  // namespace fabricsim::common
