#pragma once
// Elaboration of the two-endpoint link experiment (fabric.kind: link-pair)
// without running it: one SystemC hierarchy "link_pair" of flit_source ->
// ualink_port -> flit_sink (platform.h). link_experiment builds one, runs it
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
  /// Sets the global quantum (1 us) and builds source ("link_pair.source":
  /// the configured stream, real bytes if `real_bytes`), port
  /// ("link_pair.port": the link, seed, link id and `deadline_ps` watchdog)
  /// and sink ("link_pair.sink"), bound in that order.
  LinkPairPlatform(const config::LinkExperimentConfig& c, std::uint64_t deadline_ps, bool real_bytes);

  models::flit_source& source();
  models::ualink_port& port();
  models::flit_sink& sink();
};

}  // namespace fabricsim::sim
