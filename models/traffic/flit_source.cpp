#include "models/traffic/flit_source.h"

#include <tlm_utils/tlm_quantumkeeper.h>

#include <algorithm>
#include <vector>

#include "models/link/flit_burst_ext.h"

namespace fabricsim::models {

flit_source::flit_source(const sc_core::sc_module_name& name, std::uint32_t flit_bytes, std::uint64_t flits,
                         std::uint64_t period_ps, std::uint64_t start_ps, std::uint64_t message_flits, bool real_bytes)
    : sc_module(name),
      out("out"),
      flit_bytes_(flit_bytes),
      flits_(flits),
      period_ps_(period_ps),
      start_ps_(start_ps),
      message_flits_(std::max<std::uint64_t>(1, message_flits)),
      real_bytes_(real_bytes) {
  SC_HAS_PROCESS(flit_source);
  SC_THREAD(run);
}

void flit_source::run() {
  tlm_utils::tlm_quantumkeeper qk;
  qk.reset();
  std::vector<unsigned char> buf;
  flit_burst_ext ext;
  tlm::tlm_generic_payload tx;
  for (std::uint64_t first = 0; first < flits_; first += message_flits_) {
    const std::uint64_t n = std::min(message_flits_, flits_ - first);
    ext.time_ps.resize(n);
    ext.tag.resize(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t f = first + i;
      ext.tag[i] = f;
      ext.time_ps[i] = start_ps_ + f * period_ps_;
    }
    if (real_bytes_) {
      buf.resize(n * flit_bytes_);
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t f = first + i;
        unsigned char* rec = buf.data() + i * flit_bytes_;
        for (std::uint32_t b = 0; b < 8 && b < flit_bytes_; ++b) rec[b] = static_cast<unsigned char>(f >> (8 * b));
        for (std::uint32_t j = 8; j < flit_bytes_; ++j) rec[j] = pattern(f, j);
      }
    }
    ext.end_of_stream = first + n >= flits_;
    // Local time = first flit's arrival.
    const sc_core::sc_time t_first(static_cast<double>(ext.time_ps[0]), sc_core::SC_PS);
    const sc_core::sc_time now = qk.get_current_time();
    if (t_first > now) qk.inc(t_first - now);
    sc_core::sc_time delay = qk.get_local_time();
    tx.set_command(tlm::TLM_WRITE_COMMAND);
    tx.set_address(first * flit_bytes_);
    tx.set_data_ptr(real_bytes_ ? buf.data() : nullptr);
    tx.set_data_length(static_cast<unsigned>(n * flit_bytes_));
    tx.set_streaming_width(static_cast<unsigned>(n * flit_bytes_));
    tx.set_byte_enable_ptr(nullptr);
    tx.set_dmi_allowed(false);
    tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    {
      extension_guard guard(tx, ext);
      out->b_transport(tx, delay);
    }
    if (tx.is_response_error()) {
      failed_ = true;
      SC_REPORT_ERROR("fabricsim/flit_source", (std::string(name()) + ": port refused a burst").c_str());
      return;
    }
    qk.set(delay);
    if (qk.need_sync()) qk.sync();
  }
  qk.sync();
}

}  // namespace fabricsim::models
