#pragma once
#include <cstdint>

namespace fabricsim::models {

/// Accelerator parameters (docs/models/accelerator.md). Units in the names.
struct accelerator_params {
  std::uint64_t memory_bytes = 64ull << 20;  ///< local memory
  double reduce_rate_bytes_per_s = 2e12;     ///< reduction throughput, input bytes per second
  std::uint64_t dma_setup_ps = 0;            ///< per posted operation, before its first flit
  std::uint64_t memory_latency_ps = 0;       ///< read service time at the target
  std::uint32_t flags = 64;                  ///< flag counters software can wait on
  /// Copy / reduce throughput of one threadblock of a schedule (sw/schedule_exec.h),
  /// bytes per second; 0 = off: local copies take no time and reductions use
  /// the shared reduction unit at reduce_rate, as the built-in algorithms do.
  double threadblock_rate_bytes_per_s = 0;
  /// true: memory holds real bytes, writes copy them, reductions add floats.
  /// false (timing only): no backing store; every operation keeps its timing
  /// but moves no bytes (for fabrics whose data would not fit in RAM).
  bool functional = true;
};

}  // namespace fabricsim::models
