#pragma once
// The fabric kernel: owns the flit-level timing core of all links and
// switches, accepts DMA operations from accelerators, lands data in their
// memories, and keeps the timing core causal with respect to the software.
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "models/fabric/core/address_map.h"
#include "models/fabric/core/timing_core.h"
#include "models/fabric/fabric_sync_if.h"

namespace fabricsim::models {

/// Fabric kernel (docs/models/fabric.md).
///
/// Sockets: `dma_in` (multi target) bound by every accelerator's `dma`, in
/// rank order; `mem_out` (multi initiator) bound to every accelerator's
/// `mem`, in rank order; `sync_export` implements fabric_sync_if for the
/// accelerators' `sync` ports.
///
/// Synchronisation (conservative): the timing core may process events only
/// before the earliest time any rank could still post (a running rank: now;
/// a computing rank: the end of its computation; a blocked rank: never,
/// until the kernel wakes it). The kernel thread advances the core to that
/// horizon, stops at the first instant transfers complete, waits until that
/// simulated time, lands the data (TLM writes into `mem_out`), and wakes the
/// ranks concerned. SystemC sees one wake-up per completion instant, never one
/// per flit. A run where every rank is blocked and no flit is in flight is a
/// deadlock: the kernel raises SC_REPORT_ERROR with a diagnosis naming each
/// blocked rank's module and what it waits for, and every busy link's state;
/// simulated time passing `deadline_ps` stops the run the same way. A link
/// that exceeds its retry limit is a terminal failure: the kernel records it
/// (link_down()) and calls sc_stop().
///
/// Standard TLM-2.0 boundary (docs/architecture.md "The standard TLM-2.0
/// boundary"): one `simple_target_socket_tagged` per external initiator
/// (tlm_target(k)), named `tlm_<node>`, taking a plain tlm_generic_payload
/// READ or WRITE (data pointer, no extension) at a global address of
/// `address_map`. b_transport decodes the address to the owning accelerator,
/// posts the transfer into the timing core as endpoint `ranks + memories + k`
/// (a write: its bytes; a read: a one-flit request, then the data back) at
/// sc_time_stamp() + delay, blocks until the core has finished it and returns
/// with the delay annotated to its completion time (read data filled in).
/// Errors answered in the payload: TLM_ADDRESS_ERROR_RESPONSE (outside the
/// map, or crossing a region's end), TLM_BYTE_ENABLE_ERROR_RESPONSE (a byte
/// enable pointer), TLM_BURST_ERROR_RESPONSE (streaming width < data length),
/// TLM_GENERIC_ERROR_RESPONSE (no data pointer). transport_dbg reads and
/// writes the memories without timing; DMI is not offered. Causality: an
/// initiator outside b_transport may still send at sc_time_stamp() or later,
/// so the core is never run past that instant while one is.
class fabric_kernel : public sc_core::sc_module, public fabric_sync_if {
 public:
  tlm_utils::multi_passthrough_target_socket<fabric_kernel> dma_in;
  tlm_utils::multi_passthrough_initiator_socket<fabric_kernel> mem_out;
  sc_core::sc_export<fabric_sync_if> sync_export;

  /// `ranks` accelerators bind dma_in / mem_out in rank order; `memories`
  /// further memory-only endpoints (host memory) bind mem_out after them and
  /// attach() with ids ranks, ranks + 1, ...: peers of reads and writes, never
  /// requesters, never part of the barrier.
  /// External TLM-2.0 initiators: their node names (one target socket each,
  /// in this order) and the global address map they address.
  struct tlm_boundary {
    std::vector<std::string> initiators;
    fabric_core::AddressMap map;
  };
  fabric_kernel(const sc_core::sc_module_name& name, std::unique_ptr<fabric_core::TimingCore> engine, int ranks,
                std::vector<std::string> rank_names, std::uint64_t deadline_ps, int memories = 0,
                tlm_boundary boundary = {});

  /// Target socket of external initiator k (0-based, order of tlm_boundary::initiators).
  /// Throws std::out_of_range.
  tlm::tlm_target_socket<32>& tlm_target(std::size_t k) { return *tlm_in_.at(k); }
  std::size_t tlm_targets() const { return tlm_in_.size(); }
  const fabric_core::AddressMap& address_map() const { return map_; }

  const fabric_core::TimingCore& engine() const { return *engine_; }
  std::uint64_t completions() const { return completions_; }
  /// Progress callback (simulated ps, transfers completed), called about
  /// every 4096 completions; the platform decides whether to print.
  using ProgressHook = std::function<void(std::uint64_t sim_ps, std::uint64_t completions)>;
  /// Also called from inside the timing core while it runs long without a
  /// completion (a link that keeps replaying), with the completions so far.
  void set_progress_hook(ProgressHook f) {
    progress_ = std::move(f);
    if (progress_) engine_->set_progress_hook([this](fabric_core::ps_t t) { progress_(t, completions_); });
  }
  /// Called for every completed operation: requester rank, peer rank, read?,
  /// bytes, post time and completion time (ps). For traces.
  using OpTraceHook = std::function<void(int requester, int peer, bool read, std::uint64_t bytes,
                                         std::uint64_t start_ps, std::uint64_t end_ps)>;
  void set_op_trace_hook(OpTraceHook f) { op_trace_ = std::move(f); }
  /// Non-empty if a link exceeded its retry limit: the simulation stopped
  /// there (a terminal failure, reported as a result); names the link and flit.
  const std::string& link_down() const { return link_down_; }

  // fabric_sync_if
  void attach(int rank, rank_control_if* r) override;
  void set_state(int rank, rank_state s, std::uint64_t until_ps) override;
  std::uint64_t barrier_arrive(int rank) override;
  std::uint64_t barrier_generation() const override { return barrier_gen_; }

 private:
  struct Op {
    int requester;     // rank that posted it
    std::uint64_t op;  // requester's op id
    bool read;
    int peer;
    std::uint64_t peer_addr, local_addr, bytes;
    int flag;
    std::vector<unsigned char> data;
    int stage;                      // read: 0 = request in flight, 1 = data in flight
    std::uint64_t posted_ps;        // when the requester posted it
    int foreign = -1;               // >= 0: posted by external initiator `foreign` (no mem_out, no op id)
    unsigned char* dest = nullptr;  // foreign read: the payload's data pointer
  };
  struct Foreign {
    sc_core::sc_event done;
    bool finished = true;  // its b_transport's transfer completed (or none is open)
    std::uint64_t end_ps = 0;
  };
  using tlm_socket = tlm_utils::simple_target_socket_tagged<fabric_kernel>;
  void b_transport_tlm(int k, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  unsigned transport_dbg_tlm(int k, tlm::tlm_generic_payload& tx);
  void finish_foreign(int k, std::uint64_t t_ps);
  std::uint64_t new_op_slot();
  void b_transport(int id, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay);
  void kernel_thread();
  void complete(const fabric_core::Completion& c);
  void land(int rank, std::uint64_t addr, unsigned char* data, std::uint64_t bytes);
  /// mem_tx_ set up for one blocking access of `mem_out` (no extension, no byte enables).
  tlm::tlm_generic_payload& mem_payload(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                                        std::uint64_t bytes);
  void wake_rank(int rank);
  void change_state(int rank, rank_state s, std::uint64_t until_ps);
  std::uint64_t horizon();
  [[noreturn]] void fail(const std::string& why);
  /// The deadline diagnosis: `next_ps` (ps) is the first pending instant, past run.deadline.
  std::string fmt_deadline(std::uint64_t next_ps) const;
  std::uint64_t now_ps() const { return sc_core::sc_time_stamp().value(); }

  std::unique_ptr<fabric_core::TimingCore> engine_;
  int ranks_;
  int endpoints_;  // ranks + memory-only endpoints
  std::vector<std::string> rank_names_;
  std::uint64_t deadline_ps_;
  std::vector<rank_control_if*> ctl_;
  std::vector<rank_state> state_;
  std::vector<std::uint64_t> until_;
  int running_;   // ranks in state running
  int done_ = 0;  // ranks in state done
  // (until, rank) of computations; entries whose rank has left that state are
  // dropped when they reach the top (horizon()).
  std::priority_queue<std::pair<std::uint64_t, int>, std::vector<std::pair<std::uint64_t, int>>,
                      std::greater<std::pair<std::uint64_t, int>>>
      computing_;
  std::vector<Op> ops_;
  std::vector<std::uint64_t> free_ops_;  // recycled slots of ops_ (long runs post millions)
  std::uint64_t barrier_gen_ = 0;
  int barrier_count_ = 0;
  std::uint64_t completions_ = 0;
  sc_core::sc_event state_changed_;
  std::string link_down_;
  ProgressHook progress_;
  OpTraceHook op_trace_;
  std::vector<std::unique_ptr<tlm_socket>> tlm_in_;
  std::vector<Foreign> foreign_;
  int foreign_idle_ = 0;                             // external initiators outside b_transport: may send from now on
  // The payload of every access through mem_out: b_transport is blocking and
  // its targets keep no reference, so one object serves them all (a payload
  // constructed per access allocated its extension array every time).
  tlm::tlm_generic_payload mem_tx_;
  std::vector<fabric_core::Completion> done_batch_;  // the kernel thread's completions of one instant
  fabric_core::AddressMap map_;
};

}  // namespace fabricsim::models
