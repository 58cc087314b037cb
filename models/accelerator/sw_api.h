#pragma once
// The accelerator's software-facing interface: the only way sw/ reaches the
// fabric (platform.md §7). Every call is made from the rank's own SystemC
// thread; times are the simulated time of the call.
#include <cstdint>
#include <functional>
#include <string>

namespace fabricsim::models {

class accelerator_api {
 public:
  virtual ~accelerator_api() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  /// Local memory [0, memory_bytes()); nullptr on a timing-only accelerator.
  virtual unsigned char* memory() = 0;
  /// false: timing-only (no bytes move, reductions only take time).
  virtual bool functional() const = 0;
  virtual std::uint64_t memory_bytes() const = 0;
  /// Peer id of the host's memory (a PCIe host with DRAM behind its IO die),
  /// usable as `dst` of post_write and `src` of post_read; -1 when the fabric
  /// has none. Host memory runs no software: it never waits or posts.
  virtual int host_rank() const { return -1; }

  /// Posted write of local [src_addr, src_addr + bytes) to rank `dst` at
  /// `dst_addr`. When all of it has landed, the destination's flag `flag`
  /// (if >= 0) is incremented. Returns an operation id for wait().
  /// Throws std::out_of_range for addresses outside either memory.
  virtual std::uint64_t post_write(int dst, std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t bytes,
                                   int flag = -1) = 0;
  /// Read `bytes` of rank `src` at `src_addr` into local `dst_addr` (a request
  /// flit travels to `src`, the data travels back). Returns an operation id.
  virtual std::uint64_t post_read(int src, std::uint64_t src_addr, std::uint64_t dst_addr, std::uint64_t bytes) = 0;
  /// Block until operation `op` completed (write: data landed; read: data arrived).
  virtual void wait(std::uint64_t op) = 0;
  /// Block until every operation this rank posted completed.
  virtual void wait_all() = 0;
  /// Block until local flag `flag` >= `value`.
  virtual void wait_flag(int flag, std::uint64_t value) = 0;
  virtual std::uint64_t flag(int flag) const = 0;
  /// Set every local flag to 0 (between collectives, after a barrier).
  virtual void reset_flags() = 0;
  /// dst[i] += src[i] for `count` float32 values of local memory; takes
  /// count x 4 bytes / reduce rate of compute time.
  virtual void reduce_f32(std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t count) = 0;
  /// Spend `ps` picoseconds computing.
  virtual void compute(std::uint64_t ps) = 0;
  /// true once operation `op` (a post_write / post_read id) completed; never blocks.
  virtual bool op_done(std::uint64_t op) const = 0;
  /// Block until `ready()` holds or simulated time reaches `until_ps`
  /// (kForever: no time limit), whichever comes first; returns at once if
  /// either holds on entry. `ready` is re-evaluated whenever something this
  /// rank may wait on changes (a flag, an operation, the barrier). The rank
  /// will not post before `until_ps` unless woken. `describe` says what the
  /// rank waits for; it is called only for a deadlock diagnosis, while the
  /// call blocks. For software that keeps several streams in flight (the
  /// schedule executor's threadblocks).
  virtual void wait_until(const std::function<bool()>& ready, std::uint64_t until_ps,
                          const std::function<std::string()>& describe) = 0;
  static constexpr std::uint64_t kForever = ~0ull;
  /// Throughput of the rank's reduction unit (reduce_f32), input bytes per
  /// second; 0: reductions take no time.
  virtual double reduce_rate_bytes_per_s() const { return 0; }
  /// Copy / reduce throughput of one threadblock (one stream of a schedule),
  /// bytes per second; 0: off (not modelled).
  virtual double threadblock_rate_bytes_per_s() const { return 0; }
  /// Zero-cost barrier across all ranks (the paper's synchronous step model).
  virtual void barrier() = 0;
  /// Current simulated time, ps.
  virtual std::uint64_t now_ps() const = 0;
};

}  // namespace fabricsim::models
