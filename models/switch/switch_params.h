#pragma once
#include <cstdint>

namespace fabricsim::models {

/// UALink switch parameters (docs/models/switch.md).
struct switch_params {
  std::uint64_t latency_ps = 100000;      ///< input decode to output queue, per flit
  std::uint32_t output_queue_flits = 64;  ///< per output port; a full one blocks the inputs (0 = unbounded)
};

}  // namespace fabricsim::models
