#pragma once
#include <cstdint>

namespace fabricsim::models {

/// UALink switch parameters (docs/models/switch.md).
struct switch_params {
  std::uint64_t latency_ps = 100000;  ///< input decode to output queue, per flit
};

}  // namespace fabricsim::models
