#pragma once
// Interface between accelerators (software side) and the fabric kernel:
// data moves through TLM sockets; this interface carries what the kernel
// needs to keep its flit-level timing core causal (each rank's state), the
// zero-cost barrier, and completions back to the ranks.
#include <systemc>

#include <cstdint>
#include <string>

namespace fabricsim::models {

/// What a rank is doing, for the kernel's safe horizon: a running rank may
/// post now; a computing rank not before `until`; a blocked or done rank
/// only after the kernel wakes it.
enum class rank_state { running, compute, blocked, done };

/// Implemented by an accelerator; called by the kernel.
class rank_control_if {
 public:
  virtual ~rank_control_if() = default;
  /// Operation `op` (a posted write or read of this rank) completed.
  virtual void op_complete(std::uint64_t op) = 0;
  /// Something this rank may wait on changed (a flag, an op, the barrier): re-check.
  virtual void wake() = 0;
  /// false: the rank's memory is timing-only (no bytes to read or land).
  virtual bool functional() const = 0;
  /// Size of the rank's memory (bytes), for address checks of peers' operations.
  virtual std::uint64_t memory_bytes() const = 0;
  /// Time the rank's memory takes to serve a read request, ps.
  virtual std::uint64_t read_latency_ps() const = 0;
  /// One line: what the rank waits for (for deadlock diagnoses).
  virtual std::string waiting_for() const = 0;
};

/// Implemented by the fabric kernel; called by accelerators through an sc_port.
class fabric_sync_if : public virtual sc_core::sc_interface {
 public:
  virtual void attach(int rank, rank_control_if* r) = 0;
  virtual void set_state(int rank, rank_state s, std::uint64_t until_ps = 0) = 0;
  /// Zero-cost barrier across all ranks (the paper's synchronous step); the
  /// kernel wakes every rank when the last arrives. Returns the generation to wait for.
  virtual std::uint64_t barrier_arrive(int rank) = 0;
  virtual std::uint64_t barrier_generation() const = 0;
};

}  // namespace fabricsim::models
