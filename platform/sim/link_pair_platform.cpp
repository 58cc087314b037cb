#include "platform/sim/link_pair_platform.h"

#include <tlm>

namespace fabricsim::sim {

namespace {

// The pair's hierarchy: the three modules (their names under "link_pair") and their bindings.
struct link_pair_top : sc_core::sc_module {
  models::flit_source source;
  models::ualink_port port;
  models::flit_sink sink;
  link_pair_top(const sc_core::sc_module_name& n, const config::LinkExperimentConfig& c, std::uint64_t deadline,
                bool real_bytes)
      : sc_module(n),
        source("source", c.link.flit_bytes, c.traffic.flits, c.traffic.period_ps, c.traffic.start_ps,
               c.traffic.message_flits, real_bytes),
        port("port", c.link, c.seed, c.link_id, deadline),
        sink("sink", c.link.flit_bytes, c.traffic.flits) {
    source.out.bind(port.in);
    port.out.bind(sink.in);
  }
};

link_pair_top& top(const Platform& p) { return static_cast<link_pair_top&>(*p.modules().front()); }

}  // namespace

LinkPairPlatform::LinkPairPlatform(const config::LinkExperimentConfig& c, std::uint64_t deadline_ps, bool real_bytes) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  adopt(std::make_unique<link_pair_top>("link_pair", c, deadline_ps, real_bytes));
}

models::flit_source& LinkPairPlatform::source() { return top(*this).source; }
models::ualink_port& LinkPairPlatform::port() { return top(*this).port; }
models::flit_sink& LinkPairPlatform::sink() { return top(*this).sink; }

}  // namespace fabricsim::sim
