#include "models/switch/ualink_switch.h"

namespace fabricsim::models {

ualink_switch::ualink_switch(const sc_core::sc_module_name& name, const node_config& cfg, const switch_params& p)
    : sc_module(name),
      p_(p),
      core_(sc_module::name(), switching::SwitchParams{p_.latency_ps, p_.output_queue_flits, cfg.ports}) {}

FABRICSIM_REGISTER_MODEL("ualink-switch", ualink_switch);

}  // namespace fabricsim::models
