#pragma once
// Hooks every fabric-kernel run installs the same way (UALink fabrics and PCIe
// hosts): a once-a-second progress line on stderr and DMA-operation spans in a
// trace.
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/fabric/fabric_kernel.h"
#include "platform/report/trace.h"

namespace fabricsim::sim {

/// Prints "\r[fabricsim] <what(sim_ps, done)>, N s wall" on stderr at most
/// once a second while a run goes on; finish() ends the line if one was
/// printed. The kernel constructor hooks itself to a fabric kernel (`done`:
/// completed transfers); a run without one calls tick() from its own loop
/// (the link pair: `done` = flits delivered).
/// (Used through KernelPlatform::simulate(); kept public for runs that drive sc_start themselves.)
class ProgressLine {
 public:
  using Text = std::function<std::string(std::uint64_t sim_ps, std::uint64_t done)>;
  ProgressLine(models::fabric_kernel& kernel, Text what);
  explicit ProgressLine(Text what);
  /// Print the line if a second has passed since the last one.
  void tick(std::uint64_t sim_ps, std::uint64_t done);
  void finish();

 private:
  Text what_;
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
};

/// Every completed DMA operation becomes a span "write to X n B" / "read from
/// X n B" on track (1, requester) from post to completion; `names` names the
/// kernel's endpoints (ranks, then memory-only endpoints).
void trace_dma_operations(models::fabric_kernel& kernel, report::TraceWriter& trace, std::vector<std::string> names);

}  // namespace fabricsim::sim
