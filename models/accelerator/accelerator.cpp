#include "models/accelerator/accelerator.h"

#include <cstring>
#include <stdexcept>

#include "models/fabric/dma_ext.h"
#include "models/link/core/types.h"

namespace fabricsim::models {

accelerator::accelerator(const sc_core::sc_module_name& name, const node_config& cfg, const accelerator_params& p)
    : sc_module(name),
      dma("dma"),
      mem("mem"),
      sync("sync"),
      p_(p),
      rank_(cfg.rank),
      memory_(p_.functional ? p_.memory_bytes : 0, 0),
      flags_(p_.flags, 0) {
  mem.register_b_transport(this, &accelerator::b_transport_mem);
  mem.register_transport_dbg(this, &accelerator::transport_dbg_mem);
  SC_HAS_PROCESS(accelerator);
  SC_THREAD(run);
}

void accelerator::set_program(std::function<void(accelerator_api&)> program, int ranks) {
  program_ = std::move(program);
  ranks_ = ranks;
}

void accelerator::end_of_elaboration() { sync->attach(rank_, this); }

std::uint64_t accelerator::now_ps() const { return sc_core::sc_time_stamp().value(); }

void accelerator::run() {
  sync->set_state(rank_, rank_state::running);
  if (program_) program_(*this);
  waiting_ = "nothing (program finished)";
  done_ = true;
  sync->set_state(rank_, rank_state::done);
}

template <typename Pred, typename Describe>
void accelerator::block_until(Pred ready, Describe what) {
  if (ready()) return;  // the common case: no state change
  block_what_ = &what;
  block_describe_ = [](const void* w) -> std::string { return (*static_cast<const Describe*>(w))(); };
  while (!ready()) {
    sync->set_state(rank_, rank_state::blocked);
    sc_core::wait(wake_);
    sync->set_state(rank_, rank_state::running);
  }
  block_describe_ = nullptr;
  block_what_ = nullptr;
}

std::uint64_t accelerator::post(tlm::tlm_command cmd, int peer, std::uint64_t peer_addr, std::uint64_t local_addr,
                                std::uint64_t bytes, int flag) {
  if (local_addr > p_.memory_bytes || bytes > p_.memory_bytes - local_addr)
    throw std::out_of_range(std::string(name()) + ": local address range outside memory");
  if (bytes > 0xffffffffull) throw std::out_of_range(std::string(name()) + ": one operation moves at most 4 GiB - 1");
  if ((peer < 0 || peer >= ranks_ || peer == rank_) && !(host_rank_ >= 0 && peer == host_rank_))
    throw std::out_of_range(std::string(name()) + ": bad peer rank " + std::to_string(peer));
  if (flag >= static_cast<int>(p_.flags)) throw std::out_of_range(std::string(name()) + ": bad flag id");
  dma_ext ext;
  ext.peer = peer;
  ext.peer_addr = peer_addr;
  ext.local_addr = local_addr;
  ext.flag = flag;
  ext.op = next_op_++;
  // One payload for every post (b_transport is blocking; the kernel keeps no
  // reference): a payload constructed per post allocated its extension array.
  tlm::tlm_generic_payload& tx = dma_tx_;
  tx.set_command(cmd);
  tx.set_address(peer_addr);
  tx.set_data_ptr(p_.functional ? memory_.data() + local_addr : nullptr);
  tx.set_data_length(static_cast<unsigned>(bytes));
  tx.set_streaming_width(static_cast<unsigned>(bytes));
  tx.set_byte_enable_ptr(nullptr);
  tx.set_byte_enable_length(0);
  tx.set_dmi_allowed(false);
  tx.set_gp_option(tlm::TLM_MIN_PAYLOAD);
  tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  tx.set_extension(&ext);
  op_window_.push_back(true);
  ++open_op_count_;
  // The operation's first flit leaves dma_setup after the call (posted: the
  // caller does not wait for it).
  sc_core::sc_time delay = sc_core::sc_time::from_value(p_.dma_setup_ps);
  struct detach {
    tlm::tlm_generic_payload& t;
    dma_ext& e;
    ~detach() { t.clear_extension(&e); }
  } guard{tx, ext};
  dma->b_transport(tx, delay);
  if (tx.is_response_error())
    throw std::out_of_range(std::string(name()) + ": the fabric refused an operation to rank " + std::to_string(peer) +
                            ": " + tx.get_response_string());
  return ext.op;
}

std::uint64_t accelerator::post_write(int dst, std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t bytes,
                                      int flag) {
  return post(tlm::TLM_WRITE_COMMAND, dst, dst_addr, src_addr, bytes, flag);
}

std::uint64_t accelerator::post_read(int src, std::uint64_t src_addr, std::uint64_t dst_addr, std::uint64_t bytes) {
  return post(tlm::TLM_READ_COMMAND, src, src_addr, dst_addr, bytes, -1);
}

void accelerator::op_complete(std::uint64_t op) {
  if (!op_open(op)) return;
  op_window_[op - first_open_op_] = false;
  --open_op_count_;
  while (!op_window_.empty() && !op_window_.front()) {
    op_window_.pop_front();
    ++first_open_op_;
  }
}

void accelerator::wait(std::uint64_t op) {
  block_until([&] { return !op_open(op); }, [&] { return "operation " + std::to_string(op); });
}

void accelerator::wait_all() {
  block_until([&] { return open_op_count_ == 0; }, [] { return std::string("all posted operations"); });
}

void accelerator::wait_flag(int f, std::uint64_t value) {
  if (f < 0 || f >= static_cast<int>(flags_.size())) throw std::out_of_range(std::string(name()) + ": bad flag id");
  block_until([&] { return flags_[f] >= value; },
              [&] {
                return "flag " + std::to_string(f) + " >= " + std::to_string(value) + " (now " +
                       std::to_string(flags_[f]) + ")";
              });
}

std::uint64_t accelerator::flag(int f) const { return flags_.at(static_cast<std::size_t>(f)); }

void accelerator::reset_flags() { std::fill(flags_.begin(), flags_.end(), 0); }

void accelerator::reduce_f32(std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t count) {
  const std::uint64_t bytes = count * 4;
  const std::uint64_t M = p_.memory_bytes;
  if (dst_addr > M || bytes > M - dst_addr || src_addr > M || bytes > M - src_addr)
    throw std::out_of_range(std::string(name()) + ": reduce outside memory");
  if (p_.functional) {
    float* d = reinterpret_cast<float*>(memory_.data() + dst_addr);
    const float* s = reinterpret_cast<const float*>(memory_.data() + src_addr);
    for (std::uint64_t i = 0; i < count; ++i) d[i] += s[i];
  }
  compute(link::checked_ps(static_cast<double>(bytes) / p_.reduce_rate_bytes_per_s * 1e12, "reduction time"));
}

void accelerator::compute(std::uint64_t ps) {
  if (ps == 0) return;
  sync->set_state(rank_, rank_state::compute, now_ps() + ps);
  sc_core::wait(sc_core::sc_time::from_value(ps));
  sync->set_state(rank_, rank_state::running);
}

void accelerator::wait_until(const std::function<bool()>& ready, std::uint64_t until_ps,
                             const std::function<std::string()>& describe) {
  if (ready() || now_ps() >= until_ps) return;
  describe_ = &describe;
  while (!ready() && now_ps() < until_ps) {
    if (until_ps == kForever) {
      // Nothing to wake it but the fabric: blocked (a deadlock if all are).
      sync->set_state(rank_, rank_state::blocked);
      sc_core::wait(wake_);
    } else {
      // It posts no earlier than until_ps unless woken: a computing rank for the kernel's horizon.
      sync->set_state(rank_, rank_state::compute, until_ps);
      sc_core::wait(sc_core::sc_time::from_value(until_ps - now_ps()), wake_);
    }
    sync->set_state(rank_, rank_state::running);
  }
  describe_ = nullptr;
}

void accelerator::barrier() {
  const std::uint64_t gen = sync->barrier_arrive(rank_);
  block_until([&] { return sync->barrier_generation() >= gen; }, [&] { return "barrier " + std::to_string(gen); });
}

void accelerator::b_transport_mem(tlm::tlm_generic_payload& tx, sc_core::sc_time&) {
  const std::uint64_t a = tx.get_address();
  const std::uint64_t n = tx.get_data_length();
  if (a >= kFlagBase) {
    const std::uint64_t f = (a - kFlagBase) / 8;
    if (tx.is_write() && n == 8 && f < flags_.size()) {
      std::uint64_t v;
      std::memcpy(&v, tx.get_data_ptr(), 8);
      flags_[f] += v;
      tx.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (a > p_.memory_bytes || n > p_.memory_bytes - a) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!p_.functional || !tx.get_data_ptr()) {  // timing only: nothing to copy
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (tx.is_write()) {
    std::memcpy(memory_.data() + a, tx.get_data_ptr(), n);
  } else {
    std::memcpy(tx.get_data_ptr(), memory_.data() + a, n);
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned accelerator::transport_dbg_mem(tlm::tlm_generic_payload& tx) {
  const std::uint64_t a = tx.get_address();
  const std::uint64_t n = tx.get_data_length();
  if (a > p_.memory_bytes || n > p_.memory_bytes - a) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
  if (!p_.functional || !tx.get_data_ptr() || tx.get_command() == tlm::TLM_IGNORE_COMMAND) return 0;
  if (tx.is_write())
    std::memcpy(memory_.data() + a, tx.get_data_ptr(), n);
  else
    std::memcpy(tx.get_data_ptr(), memory_.data() + a, n);
  return static_cast<unsigned>(n);
}

FABRICSIM_REGISTER_MODEL("accelerator", accelerator);

}  // namespace fabricsim::models
