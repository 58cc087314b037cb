#pragma once
// UALink switch module (docs/models/switch.md): owns the switch component
// (models/switch/core/switch_core.h: forwarding table, input buffers,
// crossbar latency, output queues, credit back-pressure, round-robin service
// of blocked inputs) and publishes its statistics. The fabric's scheduler
// delivers flits to the component and runs its ports' link layers (one
// LinkEngine per link direction); no TLM transaction crosses the module per
// flit (platform.md §3).
#include <systemc>

#include <cstdint>
#include <ostream>

#include "models/common/stats_source.h"
#include "models/registry.h"
#include "models/switch/core/switch_core.h"
#include "models/switch/switch_params.h"

namespace fabricsim::models {

/// Switch module of kind `ualink-switch`: built from a switch_params and the
/// node's port count (cfg.ports). Its component is named after the module.
/// The elaboration fills the component's forwarding table and hands the
/// component to the scheduler; the module outlives the scheduler.
class ualink_switch : public sc_core::sc_module, public common::StatsSource {
 public:
  using params_type = switch_params;
  ualink_switch(const sc_core::sc_module_name& name, const node_config& cfg, const switch_params& p);
  const switch_params& params() const { return p_; }
  std::uint32_t ports() const { return core_.ports(); }
  /// The switch's behaviour (what the scheduler drives).
  switching::UalinkSwitch& component() { return core_; }
  const switching::UalinkSwitch& component() const { return core_; }
  /// The component's statistics (switching::UalinkSwitch::visit_stats).
  void visit_stats(const common::StatVisitor& v) const override { core_.visit_stats(v); }
  void dump_state(std::ostream& os) const { core_.dump_state(os); }

 private:
  switch_params p_;
  switching::UalinkSwitch core_;
};

}  // namespace fabricsim::models
