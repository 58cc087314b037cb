#include "platform/sim/link_pair_platform.h"

#include <tlm>

namespace fabricsim::sim {

LinkPairPlatform::LinkPairPlatform(const config::LinkExperimentConfig& c, std::uint64_t deadline_ps, bool real_bytes) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  // Three top-level modules (no container module without behaviour of its own).
  source_ = &adopt(std::make_unique<models::flit_source>("source", c.link.flit_bytes, c.traffic.flits,
                                                        c.traffic.period_ps, c.traffic.start_ps,
                                                        c.traffic.message_flits, real_bytes));
  port_ = &adopt(std::make_unique<models::ualink_port>("port", c.link, c.seed, c.link_id, deadline_ps));
  sink_ = &adopt(std::make_unique<models::flit_sink>("sink", c.link.flit_bytes));
  source_->out.bind(port_->in);
  port_->out.bind(sink_->in);
}

}  // namespace fabricsim::sim
