#include "models/traffic/flit_sink.h"

#include "models/link/flit_burst_ext.h"
#include "models/traffic/flit_source.h"

namespace fabricsim::models {

flit_sink::flit_sink(const sc_core::sc_module_name& name, std::uint32_t flit_bytes)
    : sc_module(name), in("in"), flit_bytes_(flit_bytes) {
  in.register_b_transport(this, &flit_sink::b_transport);
}

void flit_sink::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time&) {
  flit_burst_ext* ext = nullptr;
  tx.get_extension(ext);
  const std::uint64_t len = tx.get_data_length();
  const unsigned char* d = tx.get_data_ptr();
  if (tx.get_command() != tlm::TLM_WRITE_COMMAND || !ext || len % flit_bytes_ != 0 ||
      ext->time_ps.size() != len / flit_bytes_ || (!d && ext->tag.size() != ext->time_ps.size())) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  for (std::uint64_t i = 0; i < ext->time_ps.size(); ++i) {
    std::uint64_t idx = 0;
    if (d) {
      // Real bytes: the record's header is the index; its body must be the pattern.
      const unsigned char* rec = d + i * flit_bytes_;
      for (std::uint32_t b = 0; b < 8 && b < flit_bytes_; ++b) idx |= static_cast<std::uint64_t>(rec[b]) << (8 * b);
      for (std::uint32_t j = 8; j < flit_bytes_; ++j)
        if (rec[j] != flit_source::pattern(idx, j)) {
          ++data_errors_;
          break;
        }
      if (!ext->tag.empty() && ext->tag[i] != idx) ++data_errors_;  // bytes and tag disagree
    } else {
      // No bytes: the tag is the index, and the index defines the record.
      idx = ext->tag[i];
    }
    if (idx != received_) ++order_violations_;
    ++received_;
    last_delivery_ps_ = ext->time_ps[i];
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace fabricsim::models
