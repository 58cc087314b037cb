#pragma once
// Far endpoint of the link experiment: receives delivered flits, checks
// exactly-once in-order delivery of the source's flits.
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>

namespace fabricsim::models {

/// Flit sink. Socket `in` (target), bound to a port's `out`. Every burst must
/// carry a flit_burst_ext with delivery times, and either bytes (flit_source's
/// records) or one tag per flit (the flit's index). Statistics: flits
/// received, order violations (a flit whose index is not the next expected),
/// data errors (with bytes: a record whose body differs from flit_source's
/// pattern or whose header differs from its tag), the last delivery time.
/// Cost: O(1) per flit without bytes, O(flit bytes) with; memory O(1) (no
/// per-flit record: per-flit measurements observe the port's deliveries).
class flit_sink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<flit_sink> in;

  flit_sink(const sc_core::sc_module_name& name, std::uint32_t flit_bytes);
  flit_sink(const flit_sink&) = delete;
  flit_sink& operator=(const flit_sink&) = delete;

  std::uint64_t received() const { return received_; }
  std::uint64_t order_violations() const { return order_violations_; }
  std::uint64_t data_errors() const { return data_errors_; }
  /// Delivery time (ps) of the last flit received (0 before the first).
  std::uint64_t last_delivery_ps() const { return last_delivery_ps_; }

 private:
  void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  std::uint32_t flit_bytes_;
  std::uint64_t received_ = 0;
  std::uint64_t last_delivery_ps_ = 0;
  std::uint64_t order_violations_ = 0;
  std::uint64_t data_errors_ = 0;
};

}  // namespace fabricsim::models
