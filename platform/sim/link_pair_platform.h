#pragma once
// Elaboration of the two-endpoint link experiment (fabric.kind: link-pair)
// without running it: three top-level modules flit_source "source" ->
// ualink_port "port" -> flit_sink "sink" (platform.h). link_experiment builds one, runs it
// and reports.
#include <cstdint>

#include "models/link/ualink_port.h"
#include "models/traffic/flit_sink.h"
#include "models/traffic/flit_source.h"
#include "platform/config/link_config.h"
#include "platform/sim/platform.h"

namespace fabricsim::sim {

/// An elaborated link pair. Construct once per process, before sc_start().
class LinkPairPlatform : public Platform {
 public:
  /// Sets the global quantum (1 us) and builds source ("source": the
  /// configured stream, real bytes if `real_bytes`), port ("port": the link,
  /// seed, link id and `deadline_ps` watchdog) and sink ("sink"), bound in
  /// that order.
  LinkPairPlatform(const config::LinkExperimentConfig& c, std::uint64_t deadline_ps, bool real_bytes);

  models::flit_source& source() { return *source_; }
  models::ualink_port& port() { return *port_; }
  models::flit_sink& sink() { return *sink_; }

 private:
  models::flit_source* source_ = nullptr;
  models::ualink_port* port_ = nullptr;
  models::flit_sink* sink_ = nullptr;
};

}  // namespace fabricsim::sim
