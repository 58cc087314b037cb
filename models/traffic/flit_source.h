#pragma once
// Traffic source of the link experiment: posts a periodic stream of payload
// flits to a port as TLM WRITE bursts.
#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>

namespace fabricsim::models {

/// Periodic flit source. Flit i (0-based) arrives at start_ps + i x period_ps;
/// flits are posted in bursts of at most message_flits, each a WRITE whose
/// flit_burst_ext names flit i by its tag i. Flit i's record is its index (8
/// bytes, little endian) followed by pattern(i, j): a pure function of the
/// index, so the index alone describes the record and the sink checks
/// exactly-once in-order delivery in O(1) per flit. With `real_bytes` the
/// records are also made as bytes (data pointer non-null) for the port to
/// carry and the sink to check byte by byte; without (the default, what
/// `fabricsim run` does) no payload byte exists: the data pointer is null.
///
/// Socket: `out` (initiator), bound to a port's `in`. Runs one SC_THREAD with
/// a tlm_quantumkeeper (the global quantum is set by the top level).
class flit_source : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<flit_source> out;

  flit_source(const sc_core::sc_module_name& name, std::uint32_t flit_bytes, std::uint64_t flits,
              std::uint64_t period_ps, std::uint64_t start_ps, std::uint64_t message_flits, bool real_bytes = false);
  flit_source(const flit_source&) = delete;
  flit_source& operator=(const flit_source&) = delete;

  /// Byte j of flit i's record (j >= 8); shared with the sink's check.
  static unsigned char pattern(std::uint64_t flit, std::uint32_t j) {
    return static_cast<unsigned char>((flit * 131u + j * 7u) & 0xffu);
  }
  bool failed() const { return failed_; }

 private:
  void run();
  std::uint32_t flit_bytes_;
  std::uint64_t flits_, period_ps_, start_ps_, message_flits_;
  bool real_bytes_;
  bool failed_ = false;
};

}  // namespace fabricsim::models
