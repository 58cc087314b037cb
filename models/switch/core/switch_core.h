#pragma once
// UALink switch (docs/models/switch.md): forwarding table, per-input-port
// buffers, crossbar latency, per-output-port queues with admission, credit
// back-pressure toward the upstream links, round-robin service of blocked
// inputs. Plain C++, no SystemC: the ualink_switch module
// (models/switch/ualink_switch.h) owns one; the fabric's scheduler
// (models/fabric/core/fabric_engine.h) delivers flits to it and runs its
// ports' link layers.
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "models/common/flit_component.h"
#include "models/common/stats_source.h"
#include "models/link/core/ring_queue.h"

namespace fabricsim::switching {

using link::ps_t;

/// Parameters of one UALink switch.
struct SwitchParams {
  ps_t crossbar_latency_ps = 100000;      ///< per flit, from leaving its input buffer to entry into the output queue, ps
  std::uint32_t output_queue_flits = 64;  ///< capacity of each output port's queue, flits (0 = unbounded)
  std::uint32_t ports = 0;                ///< number of ports (each one input and one output)
};

/// Statistics of a switch (sums over its ports).
struct SwitchStats {
  std::uint64_t received_flits = 0;   ///< flits delivered on the input ports
  std::uint64_t forwarded_flits = 0;  ///< flits through the crossbar into an output queue
  std::uint64_t input_blocks = 0;     ///< times an input's head flit found its output queue full
  ps_t input_blocked_ps = 0;          ///< total time inputs spent blocked (ended blocks), ps
  std::uint64_t max_input_buffer_flits = 0;  ///< most flits one input buffer held
  std::uint64_t max_output_queue_flits = 0;  ///< most flits one output queue held (counting those in the crossbar)
};

/// A UALink switch with `ports` ports.
///
/// A flit received in order on input port i enters i's buffer. The buffer's
/// head flit looks up its output port o in the forwarding table (by
/// destination rank) and crosses the crossbar if o's queue holds fewer than
/// `output_queue_flits` flits (flits still in the crossbar count): it then
/// enters o's queue `crossbar_latency_ps` later, and its buffer slot's credit
/// goes back to the transmitter upstream of i at once (the link adds its
/// control delay). Otherwise input i is blocked behind it (head of line) and
/// waits on o; its later flits wait behind, and since it returns no credits,
/// the upstream transmitter stalls after its credits run out (back-pressure,
/// nothing is dropped). Each time o's transmitter admits a flit into TxReplay
/// (o's queue shrank), the inputs blocked on o are served in the order they
/// blocked (round robin, FIFO) while o has room.
/// Errors: std::logic_error for a flit with no forwarding-table entry or a
/// flit before bind(). Ports are not range-checked per flit: the scheduler
/// checks at elaboration that every link uses a port < `ports`.
class UalinkSwitch : public common::FlitComponent, public common::StatsSource {
 public:
  static constexpr std::uint32_t kNoPort = std::numeric_limits<std::uint32_t>::max();

  UalinkSwitch(std::string name, const SwitchParams& p);
  UalinkSwitch(const UalinkSwitch&) = delete;
  UalinkSwitch& operator=(const UalinkSwitch&) = delete;

  /// Forwarding table: flits to accelerator rank `dst_rank` leave by `port`.
  /// Throws std::invalid_argument for a negative rank or a port >= ports.
  void set_route(int dst_rank, std::uint32_t port);
  /// The table's output port toward `dst_rank`, or kNoPort if it has none.
  std::uint32_t route(int dst_rank) const {
    return dst_rank >= 0 && static_cast<std::size_t>(dst_rank) < route_.size() ? route_[dst_rank] : kNoPort;
  }

  // FlitComponent
  std::uint32_t ports() const override { return p_.ports; }
  void bind(common::NodeLinks& links) override { links_ = &links; }
  void receive(std::uint32_t port, ps_t t, const common::FlitTag& tag) override;
  void admitted(std::uint32_t port, ps_t t) override;
  std::uint64_t max_input_flits(std::uint32_t port) const override { return inputs_.at(port).max_flits; }
  std::size_t dump_blocked(std::ostream& os, std::size_t max_lines) const override;

  const std::string& name() const { return name_; }
  const SwitchParams& params() const { return p_; }
  const SwitchStats& stats() const { return stats_; }
  /// Flits held in input port i's buffer.
  std::size_t input_flits(std::uint32_t i) const { return inputs_.at(i).buffer.size(); }
  /// Output port input i is blocked on, or kNoPort.
  std::uint32_t blocked_on(std::uint32_t i) const { return inputs_.at(i).blocked_on; }
  /// Flits in output port o's queue (sent through the crossbar, not yet admitted into TxReplay).
  std::uint64_t output_flits(std::uint32_t o) const { return outputs_.at(o).queued; }
  /// Inputs blocked on output o, in the order they will be served.
  std::vector<std::uint32_t> waiters(std::uint32_t o) const;

  /// Statistics: received_flits, forwarded_flits, input_blocks, input_blocked_ps,
  /// max_input_buffer_flits, max_output_queue_flits.
  void visit_stats(const common::StatVisitor& v) const override;
  /// Parameters, every non-empty input and output port.
  void dump_state(std::ostream& os) const;

 private:
  struct InputPort {
    link::RingQueue<common::FlitTag> buffer;  // delivered, not yet through the crossbar
    std::uint64_t max_flits = 0;
    std::uint32_t blocked_on = kNoPort;  // output this input waits for (head of line)
    ps_t blocked_since = 0;
  };
  struct OutputPort {
    std::uint64_t queued = 0;                 // through (or in) the crossbar, not yet admitted
    link::RingQueue<std::uint32_t> waiters;  // blocked inputs, in the order they blocked
  };
  bool has_room(const OutputPort& o) const { return p_.output_queue_flits == 0 || o.queued < p_.output_queue_flits; }
  void forward(std::uint32_t in, ps_t t);
  // Input port `ip` held `flits` at once: its and the switch's maxima.
  void note_held(InputPort& ip, std::uint64_t flits);
  // The flit from input `in` crosses to output `o` at t: its credit goes
  // back upstream, it enters o's queue crossbar_latency_ps later.
  void cross(std::uint32_t in, std::uint32_t o, ps_t t, const common::FlitTag& tag);

  std::string name_;
  SwitchParams p_;
  common::NodeLinks* links_ = nullptr;
  std::vector<std::uint32_t> route_;  // destination rank -> output port
  std::vector<InputPort> inputs_;
  std::vector<OutputPort> outputs_;
  SwitchStats stats_;
};

}  // namespace fabricsim::switching
