#pragma once
// Far endpoint of the link experiment: receives delivered flits, checks
// exactly-once in-order delivery of the source's bytes, records delivery times.
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <vector>

namespace fabricsim::models {

/// Flit sink. Socket `in` (target), bound to a port's `out`. Every burst must
/// carry a flit_burst_ext with delivery times. Statistics: flits received,
/// order violations (a flit whose index is not the next expected), data
/// errors (a byte differing from flit_source's record), delivery times.
class flit_sink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<flit_sink> in;

  flit_sink(const sc_core::sc_module_name& name, std::uint32_t flit_bytes);
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
