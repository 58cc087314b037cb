#pragma once
// Payload extension carrying per-flit times with a TLM transaction
// (platform.md §3: merging and timing need per-flit arrival times from
// upstream). One transaction = a burst of whole flits.
#include <tlm>

#include <cstdint>
#include <vector>

namespace fabricsim::models {

/// Per-flit timing and identity of a burst of payload flits (data_length =
/// flits x flit bytes).
///
/// The payload's bytes are optional: a burst whose data pointer is null
/// carries no bytes (the link layer never reads them); its flits are named by
/// `tag` instead, so nothing is made, copied or checked per byte. A model that
/// needs the bytes passes a real data pointer and the port carries them.
///
/// Field by field, who writes it:
///  - time_ps: the initiator writes each flit's arrival (offer) time when it
///    posts a burst to a port; a port writes each flit's in-order delivery
///    time when it forwards delivered flits to the far endpoint. Absolute
///    simulated time in ps.
///  - tag: one 64-bit word per flit, or empty. The initiator writes it
///    (flit_source: the flit's index); a port carries each word with its flit
///    and writes the delivered flits' words, in delivery order. Required when
///    the data pointer is null.
///  - first_seq: written by a port when delivering: link sequence number of
///    the burst's first flit (flits of one burst are consecutive).
///  - end_of_stream: written by the initiator on its last burst; the port then
///    runs its link to completion and delivers everything still in flight.
struct flit_burst_ext : tlm::tlm_extension<flit_burst_ext> {
  std::vector<std::uint64_t> time_ps;
  std::vector<std::uint64_t> tag;
  std::uint64_t first_seq = 0;
  bool end_of_stream = false;

  tlm::tlm_extension_base* clone() const override { return new flit_burst_ext(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override { *this = static_cast<const flit_burst_ext&>(other); }
};

/// Scope guard: attaches a caller-owned (stack) extension to a payload and
/// detaches it on every exit path, so an exception thrown through the
/// transport (SC_REPORT_ERROR) never lets the payload's destructor free it.
class extension_guard {
 public:
  extension_guard(tlm::tlm_generic_payload& tx, flit_burst_ext& ext) : tx_(tx), ext_(ext) { tx_.set_extension(&ext_); }
  ~extension_guard() { tx_.clear_extension(&ext_); }
  extension_guard(const extension_guard&) = delete;
  extension_guard& operator=(const extension_guard&) = delete;

 private:
  tlm::tlm_generic_payload& tx_;
  flit_burst_ext& ext_;
};

}  // namespace fabricsim::models
