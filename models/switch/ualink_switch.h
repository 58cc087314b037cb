#pragma once
// UALink switch (docs/models/switch.md): every port runs the same link layer
// as an accelerator port; flits cross a crossbar into per-port output queues.
#include <systemc>

#include <cstdint>

#include "models/registry.h"
#include "models/switch/switch_params.h"

namespace fabricsim::models {

/// Switch module. Its ports' link layers and its crossbar are timed by the
/// fabric kernel's flit-level core (one LinkEngine per link direction; a flit
/// delivered in order on an input port enters the output port's admission
/// queue `latency` later; output queues are unbounded, FIFO, ties in arrival
/// order; nothing is dropped). The module carries the switch's identity,
/// parameters and port count for elaboration and statistics; no TLM
/// transaction crosses it per flit (platform.md §3).
class ualink_switch : public sc_core::sc_module {
 public:
  ualink_switch(const sc_core::sc_module_name& name, const node_config& cfg)
      : sc_module(name), p_(std::any_cast<switch_params>(cfg.params)), ports_(cfg.ports) {}
  const switch_params& params() const { return p_; }
  std::uint32_t ports() const { return ports_; }

 private:
  switch_params p_;
  std::uint32_t ports_;
};

}  // namespace fabricsim::models
