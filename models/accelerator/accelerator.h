#pragma once
// Accelerator model: local memory (TLM target), a DMA initiator posting
// writes and reads to peers through the fabric, flag counters, a reduction
// unit, and a SystemC thread running the software program (sw/).
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "models/accelerator/accelerator_params.h"
#include "models/accelerator/sw_api.h"
#include "models/fabric/fabric_sync_if.h"
#include "models/registry.h"

namespace fabricsim::models {

/// Accelerator (docs/models/accelerator.md).
///
/// Sockets: `dma` (initiator) posts operations to the fabric (payload
/// extension dma_ext); `mem` (target) is local memory, written and read by
/// the fabric (addresses >= kFlagBase are flag doorbells: a write adds its
/// value; transport_dbg reads and writes memory, not flags, without timing;
/// a timing-only memory transfers 0 bytes); `sync` (port) tells the fabric kernel this rank's state.
/// The program (set_program) runs in the SC_THREAD `run`; when it returns the
/// rank is done. Errors: out-of-range addresses throw std::out_of_range
/// from the software calls; a TLM access outside memory gets
/// TLM_ADDRESS_ERROR_RESPONSE.
class accelerator : public sc_core::sc_module, public accelerator_api, public rank_control_if {
 public:
  tlm_utils::simple_initiator_socket<accelerator> dma;
  tlm_utils::simple_target_socket<accelerator> mem;
  sc_core::sc_port<fabric_sync_if> sync;

  using params_type = accelerator_params;
  accelerator(const sc_core::sc_module_name& name, const node_config& cfg, const accelerator_params& p);
  accelerator(const accelerator&) = delete;
  accelerator& operator=(const accelerator&) = delete;

  /// The software this rank runs; `ranks` is the communicator size.
  void set_program(std::function<void(accelerator_api&)> program, int ranks);
  /// Peer id of host memory (see accelerator_api::host_rank); -1: none.
  void set_host_rank(int id) { host_rank_ = id; }
  const accelerator_params& params() const { return p_; }
  bool done() const { return done_; }

  // accelerator_api
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  unsigned char* memory() override { return p_.functional ? memory_.data() : nullptr; }
  std::uint64_t memory_bytes() const override { return p_.memory_bytes; }
  int host_rank() const override { return host_rank_; }
  bool functional() const override { return p_.functional; }
  std::uint64_t post_write(int dst, std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t bytes,
                           int flag) override;
  std::uint64_t post_read(int src, std::uint64_t src_addr, std::uint64_t dst_addr, std::uint64_t bytes) override;
  void wait(std::uint64_t op) override;
  void wait_all() override;
  void wait_flag(int flag, std::uint64_t value) override;
  std::uint64_t flag(int flag) const override;
  void reset_flags() override;
  void reduce_f32(std::uint64_t dst_addr, std::uint64_t src_addr, std::uint64_t count) override;
  void compute(std::uint64_t ps) override;
  bool op_done(std::uint64_t op) const override { return !op_open(op); }
  void wait_until(const std::function<bool()>& ready, std::uint64_t until_ps,
                  const std::function<std::string()>& describe) override;
  double reduce_rate_bytes_per_s() const override { return p_.reduce_rate_bytes_per_s; }
  double threadblock_rate_bytes_per_s() const override { return p_.threadblock_rate_bytes_per_s; }
  void barrier() override;
  std::uint64_t now_ps() const override;

  // rank_control_if
  void op_complete(std::uint64_t op) override;
  void wake() override { wake_.notify(sc_core::SC_ZERO_TIME); }
  std::string waiting_for() const override {
    if (block_describe_) return block_describe_(block_what_);
    return describe_ ? (*describe_)() : waiting_;
  }
  std::uint64_t read_latency_ps() const override { return p_.memory_latency_ps; }

 private:
  void run();
  void end_of_elaboration() override;
  void b_transport_mem(tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  unsigned transport_dbg_mem(tlm::tlm_generic_payload& tx);
  std::uint64_t post(tlm::tlm_command cmd, int peer, std::uint64_t peer_addr, std::uint64_t local_addr,
                     std::uint64_t bytes, int flag);
  /// Block until ready(); what() describes the wait (built only when blocking).
  template <typename Pred, typename Describe>
  void block_until(Pred ready, Describe what);

  accelerator_params p_;
  int rank_;
  int ranks_ = 0;
  int host_rank_ = -1;
  std::vector<unsigned char> memory_;
  std::vector<std::uint64_t> flags_;
  std::function<void(accelerator_api&)> program_;
  std::uint64_t next_op_ = 1;
  // Open operations: op ids are handed out in order, so the ids from
  // first_open_op_ on are a window (1 = still open), its finished head
  // trimmed as they complete; no allocation per operation.
  std::deque<bool> op_window_;
  std::uint64_t first_open_op_ = 1;  // id of op_window_.front()
  std::uint64_t open_op_count_ = 0;
  bool op_open(std::uint64_t op) const {
    return op >= first_open_op_ && op - first_open_op_ < op_window_.size() && op_window_[op - first_open_op_];
  }
  tlm::tlm_generic_payload dma_tx_;  // the payload of every post()
  sc_core::sc_event wake_;
  std::string waiting_;
  const std::function<std::string()>* describe_ = nullptr;  // wait_until's, while it blocks
  // block_until's description of its wait, built only when asked
  // (waiting_for(), a deadlock's diagnosis): the Describe object and its caller.
  const void* block_what_ = nullptr;
  std::string (*block_describe_)(const void*) = nullptr;
  bool done_ = false;
};

}  // namespace fabricsim::models
