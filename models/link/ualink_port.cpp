#include "models/link/ualink_port.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

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
  // Delivery times go straight into the next outgoing burst: the engine keeps
  // no per-flit record (memory stays flat however long the stream).
  engine_.set_record_times(false);
  engine_.set_delivery_hook([this](std::uint64_t seq, link::ps_t t) {
    out_ext_.time_ps.push_back(t);
    if (on_delivery_) on_delivery_(seq, t);
  });
}

std::string ualink_port::diagnosis() const { return std::string(name()) + ": " + engine_.diagnosis(); }

void ualink_port::b_transport(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
  flit_burst_ext* ext = nullptr;
  tx.get_extension(ext);
  const std::uint64_t len = tx.get_data_length();
  const std::uint64_t n = len / flit_bytes_;
  if (tx.get_command() != tlm::TLM_WRITE_COMMAND || !ext || len % flit_bytes_ != 0 || ext->time_ps.size() != n ||
      (!ext->tag.empty() && ext->tag.size() != n)) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const bool bytes = tx.get_data_ptr() != nullptr, tags = !ext->tag.empty();
  const Payload mode = bytes && tags ? Payload::both : bytes ? Payload::bytes : tags ? Payload::tags : Payload::unknown;
  if (n > 0 && (mode == Payload::unknown || (payload_ != Payload::unknown && mode != payload_))) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  try {
    for (std::uint64_t i = 0; i < n; ++i) engine_.offer(ext->time_ps[i]);
  } catch (const std::logic_error&) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (n > 0) payload_ = mode;
  if (tags)
    for (std::uint64_t i = 0; i < n; ++i) tags_.push_back(ext->tag[i]);
  if (bytes) data_.insert(data_.end(), tx.get_data_ptr(), tx.get_data_ptr() + len);

  if (ext->end_of_stream) {
    const auto st = engine_.run_to_completion(deadline_ps_);
    forward_delivered();
    if (st == link::LinkEngine::Status::deadline) report_deadline();
    if (st != link::LinkEngine::Status::done && st != link::LinkEngine::Status::link_down)
      SC_REPORT_ERROR("fabricsim/ualink_port", diagnosis().c_str());
  } else if (n > 0) {
    if (ext->time_ps[n - 1] > deadline_ps_) {
      // Flits that arrive after the watchdog's deadline: the stream cannot
      // complete within it. Run to the deadline (a link that goes down by
      // then is a result) and stop there.
      if (engine_.run_to_completion(deadline_ps_) != link::LinkEngine::Status::link_down) {
        forward_delivered();
        report_deadline();
      }
    }
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

void ualink_port::report_deadline() {
  SC_REPORT_ERROR("fabricsim/ualink_port",
                  fmt::format("the stream did not complete within the watchdog deadline of {:g} us simulated ({} "
                              "flits delivered of the {} offered by then; the key run.deadline sets it): {}",
                              deadline_ps_ / 1e6, engine_.delivered(), engine_.offered(), diagnosis())
                      .c_str());
}

void ualink_port::forward_delivered() {
  const std::uint64_t n = out_ext_.time_ps.size();  // delivered since the last forward (the engine's hook)
  if (n == 0) return;
  out_ext_.first_seq = forwarded_;
  out_ext_.tag.clear();
  if (payload_ == Payload::tags || payload_ == Payload::both)
    for (std::uint64_t i = 0; i < n; ++i) {
      out_ext_.tag.push_back(tags_.front());
      tags_.pop_front();
    }
  const bool bytes = payload_ == Payload::bytes || payload_ == Payload::both;
  tlm::tlm_generic_payload& tx = out_tx_;
  tx.set_command(tlm::TLM_WRITE_COMMAND);
  tx.set_address(forwarded_ * flit_bytes_);
  tx.set_data_ptr(bytes ? data_.data() + data_head_ : nullptr);
  tx.set_data_length(static_cast<unsigned>(n * flit_bytes_));
  tx.set_streaming_width(static_cast<unsigned>(n * flit_bytes_));
  tx.set_byte_enable_ptr(nullptr);
  tx.set_dmi_allowed(false);
  tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  {
    extension_guard guard(tx, out_ext_);
    out->b_transport(tx, d);
  }
  if (tx.is_response_error())
    SC_REPORT_ERROR("fabricsim/ualink_port", (diagnosis() + ": far endpoint refused a delivery").c_str());
  if (bytes) {
    // Drop the delivered bytes; compact only once the dead prefix outweighs
    // what is left (amortised O(1) per byte, no copy of the whole buffer per burst).
    data_head_ += n * flit_bytes_;
    if (data_head_ == data_.size()) {
      data_.clear();
      data_head_ = 0;
    } else if (data_head_ > data_.size() - data_head_) {
      data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(data_head_));
      data_head_ = 0;
    }
  }
  forwarded_ += n;
  out_ext_.time_ps.clear();
}

}  // namespace fabricsim::models
