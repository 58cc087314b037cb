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

/// Prints "\r[fabricsim] <what(sim_ps, transfers)>, N s wall" at most once a
/// second while the kernel runs; finish() ends the line if one was printed.
/// (Used through KernelPlatform::simulate(); kept public for runs that drive sc_start themselves.)
class ProgressLine {
 public:
  using Text = std::function<std::string(std::uint64_t sim_ps, std::uint64_t transfers)>;
  ProgressLine(models::fabric_kernel& kernel, Text what);
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
