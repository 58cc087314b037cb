#include "platform/sim/kernel_hooks.h"

#include "platform/report/setup_progress.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

namespace fabricsim::sim {

ProgressLine::ProgressLine(Text what)
    : what_(std::move(what)), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressLine::ProgressLine(models::fabric_kernel& kernel, Text what) : ProgressLine(std::move(what)) {
  kernel.set_progress_hook([this](std::uint64_t sim_ps, std::uint64_t done) { tick(sim_ps, done); });
}

void ProgressLine::tick(std::uint64_t sim_ps, std::uint64_t done) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  printed_ = true;
  // wall time since the process started: set-up (routing, elaboration) included
  std::fprintf(stderr, "\r[fabricsim] %s, %.0f s wall ", what_(sim_ps, done).c_str(), report::seconds_since_start());
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (printed_) std::fprintf(stderr, "\n");
  printed_ = false;
}

void trace_dma_operations(models::fabric_kernel& kernel, report::TraceWriter& trace, std::vector<std::string> names) {
  trace.name_process(1, "DMA operations (post to completion)");
  kernel.set_op_trace_hook([&trace, names = std::move(names)](int req, int peer, bool read, std::uint64_t bytes,
                                                              std::uint64_t start, std::uint64_t end) {
    trace.span(fmt::format("{} {} {} B", read ? "read from" : "write to", names[peer], bytes), read ? "read" : "write",
               1, req, start, end - start);
  });
}

}  // namespace fabricsim::sim
