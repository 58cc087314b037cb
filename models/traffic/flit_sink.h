#pragma once
// Far endpoint of the link experiment: receives delivered flits, checks
// exactly-once in-order delivery of the source's flits, records delivery times.
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <cstdint>
#include <vector>

namespace fabricsim::models {

/// Flit sink. Socket `in` (target), bound to a port's `out`. Every burst must
/// carry a flit_burst_ext with delivery times, and either bytes (flit_source's
/// records) or one tag per flit (the flit's index). Statistics: flits
/// received, order violations (a flit whose index is not the next expected),
/// data errors (with bytes: a record whose body differs from flit_source's
/// pattern or whose header differs from its tag), delivery times. Cost: O(1)
/// per flit without bytes, O(flit bytes) with.
class flit_sink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<flit_sink> in;

  /// expected_flits: how many flits will arrive (reserves the delivery-time
  /// record once; 0 = unknown, the record grows as needed).
  flit_sink(const sc_core::sc_module_name& name, std::uint32_t flit_bytes, std::uint64_t expected_flits = 0);
  flit_sink(const flit_sink&) = delete;
  flit_sink& operator=(const flit_sink&) = delete;

  std::uint64_t received() const { return delivery_ps_.size(); }
  std::uint64_t order_violations() const { return order_violations_; }
  std::uint64_t data_errors() const { return data_errors_; }
  /// Delivery time (ps) of flit i, in arrival order.
  const std::vector<std::uint64_t>& delivery_ps() const { return delivery_ps_; }

 private:
  void b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  std::uint32_t flit_bytes_;
  std::vector<std::uint64_t> delivery_ps_;
  std::uint64_t order_violations_ = 0;
  std::uint64_t data_errors_ = 0;
};

}  // namespace fabricsim::models
