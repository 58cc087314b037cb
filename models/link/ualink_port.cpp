#include "models/link/ualink_port.h"

#include <algorithm>
#include <cstring>

#include "models/link/flit_burst_ext.h"

namespace fabricsim::models {

ualink_port::ualink_port(const sc_core::sc_module_name& name, const link::LinkConfig& cfg, std::uint64_t seed,
                         std::uint64_t link_id, std::uint64_t deadline_ps)
    : sc_module(name),
      in("in"),
      out("out"),
      engine_(cfg, link::make_policy(cfg.policy_name, cfg.fec_menu, cfg.policy), seed, link_id),
      deadline_ps_(deadline_ps),
      flit_bytes_(cfg.flit_bytes) {
  in.register_b_transport(this, &ualink_port::b_transport);
}

std::string ualink_port::diagnosis() const { return std::string(name()) + ": " + engine_.diagnosis(); }

void ualink_port::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
  flit_burst_ext* ext = nullptr;
  tx.get_extension(ext);
  const std::uint64_t len = tx.get_data_length();
  if (tx.get_command() != tlm::TLM_WRITE_COMMAND || !ext || len % flit_bytes_ != 0 ||
      ext->time_ps.size() != len / flit_bytes_) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const std::uint64_t n = len / flit_bytes_;
  try {
    for (std::uint64_t i = 0; i < n; ++i) engine_.offer(ext->time_ps[i]);
  } catch (const std::logic_error&) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  data_.insert(data_.end(), tx.get_data_ptr(), tx.get_data_ptr() + len);

  if (ext->end_of_stream) {
    const auto st = engine_.run_to_completion(deadline_ps_);
    forward_delivered();
    if (st != link::LinkEngine::Status::done && st != link::LinkEngine::Status::link_down)
      SC_REPORT_ERROR("fabricsim/ualink_port", diagnosis().c_str());
  } else if (n > 0) {
    // Every later burst arrives no earlier than this one's last flit.
    engine_.run_before(ext->time_ps[n - 1]);
    forward_delivered();
  }
  if (n > 0) {
    const sc_core::sc_time t_last(static_cast<double>(ext->time_ps[n - 1]), sc_core::SC_PS);
    const sc_core::sc_time now = sc_core::sc_time_stamp() + delay;
    if (t_last > now) delay += t_last - now;
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

void ualink_port::forward_delivered() {
  const std::uint64_t upto = engine_.delivered();
  if (upto == forwarded_) return;
  const std::uint64_t n = upto - forwarded_;
  flit_burst_ext ext;
  ext.first_seq = forwarded_;
  ext.time_ps.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) ext.time_ps[i] = engine_.delivery_time(forwarded_ + i);

  tlm::tlm_generic_payload tx;
  tx.set_command(tlm::TLM_WRITE_COMMAND);
  tx.set_address(forwarded_ * flit_bytes_);
  tx.set_data_ptr(data_.data());
  tx.set_data_length(static_cast<unsigned>(n * flit_bytes_));
  tx.set_streaming_width(static_cast<unsigned>(n * flit_bytes_));
  tx.set_byte_enable_ptr(nullptr);
  tx.set_dmi_allowed(false);
  tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  {
    extension_guard guard(tx, ext);
    out->b_transport(tx, d);
  }
  if (tx.is_response_error()) SC_REPORT_ERROR("fabricsim/ualink_port", (diagnosis() + ": far endpoint refused a delivery").c_str());
  data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(n * flit_bytes_));
  data_first_seq_ += n;
  forwarded_ = upto;
}

}  // namespace fabricsim::models
