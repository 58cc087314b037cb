#include "models/fabric/fabric_kernel.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <fmt/format.h>

#include "models/fabric/dma_ext.h"

namespace fabricsim::models {

fabric_kernel::fabric_kernel(const sc_core::sc_module_name& name, std::unique_ptr<fabric_core::TimingCore> engine,
                             int ranks, std::vector<std::string> rank_names, std::uint64_t deadline_ps, int memories,
                             tlm_boundary boundary)
    : sc_module(name),
      dma_in("dma_in"),
      mem_out("mem_out"),
      sync_export("sync_export"),
      engine_(std::move(engine)),
      ranks_(ranks),
      endpoints_(ranks + memories),
      rank_names_(std::move(rank_names)),
      deadline_ps_(deadline_ps),
      ctl_(ranks + memories, nullptr),
      state_(ranks, rank_state::running),
      until_(ranks, 0),
      running_(ranks),
      foreign_(boundary.initiators.size()),
      foreign_idle_(static_cast<int>(boundary.initiators.size())),
      map_(std::move(boundary.map)) {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    SC_REPORT_FATAL("fabricsim/fabric_kernel", "the time resolution must be 1 ps");
  dma_in.register_b_transport(this, &fabric_kernel::b_transport);
  for (std::size_t k = 0; k < boundary.initiators.size(); ++k) {
    tlm_in_.push_back(std::make_unique<tlm_socket>(("tlm_" + boundary.initiators[k]).c_str()));
    tlm_in_.back()->register_b_transport(this, &fabric_kernel::b_transport_tlm, static_cast<int>(k));
    tlm_in_.back()->register_transport_dbg(this, &fabric_kernel::transport_dbg_tlm, static_cast<int>(k));
  }
  sync_export.bind(*this);
  SC_HAS_PROCESS(fabric_kernel);
  SC_THREAD(kernel_thread);
}

void fabric_kernel::attach(int rank, rank_control_if* r) {
  if (rank < 0 || rank >= endpoints_) SC_REPORT_ERROR("fabricsim/fabric_kernel", "attach: rank out of range");
  ctl_[rank] = r;
}

void fabric_kernel::set_state(int rank, rank_state s, std::uint64_t until_ps) {
  change_state(rank, s, until_ps);
  state_changed_.notify(sc_core::SC_ZERO_TIME);
}

void fabric_kernel::change_state(int r, rank_state s, std::uint64_t until_ps) {
  const rank_state old = state_[r];
  if (old == rank_state::running) --running_;
  if (old == rank_state::done) --done_;
  if (s == rank_state::running) ++running_;
  if (s == rank_state::done) ++done_;
  state_[r] = s;
  until_[r] = until_ps;
  if (s == rank_state::compute) computing_.push({until_ps, r});
}

std::uint64_t fabric_kernel::barrier_arrive(int) {
  const std::uint64_t target = barrier_gen_ + 1;
  if (++barrier_count_ == ranks_) {
    barrier_count_ = 0;
    ++barrier_gen_;
    for (int r = 0; r < ranks_; ++r)
      if (state_[r] == rank_state::blocked) wake_rank(r);
  }
  return target;
}

void fabric_kernel::wake_rank(int r) {
  if (r >= ranks_ || state_[r] == rank_state::done) return;  // memory-only endpoints run no software
  change_state(r, rank_state::running, 0);                   // may post from now on: the horizon stops here
  ctl_[r]->wake();
}

std::uint64_t fabric_kernel::horizon() {
  // min(now if any rank runs, the earliest end of a computation): O(1)
  // amortised, not a scan of every rank at every completion instant.
  std::uint64_t h = running_ > 0 ? now_ps() : link::kNever;
  while (!computing_.empty()) {
    const auto [until, r] = computing_.top();
    if (state_[r] == rank_state::compute && until_[r] == until) {
      h = std::min(h, until);
      break;
    }
    computing_.pop();  // stale: the rank left that computation
  }
  return h;
}

void fabric_kernel::b_transport(int id, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
  dma_ext* ext = nullptr;
  tx.get_extension(ext);
  if (!ext || ext->peer < 0 || ext->peer >= endpoints_ || ext->peer == id) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // The peer's address range must exist (flags are reached through the op's flag id).
  const std::uint64_t peer_mem = ctl_[ext->peer]->memory_bytes();
  if (ext->peer_addr > peer_mem || tx.get_data_length() > peer_mem - ext->peer_addr) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  Op op;
  op.requester = id;
  op.op = ext->op;
  op.read = tx.is_read();
  op.peer = ext->peer;
  op.peer_addr = ext->peer_addr;
  op.local_addr = ext->local_addr;
  op.bytes = tx.get_data_length();
  op.flag = ext->flag;
  op.stage = 0;
  op.posted_ps = now_ps() + delay.value();
  if (!op.read && tx.get_data_ptr()) op.data.assign(tx.get_data_ptr(), tx.get_data_ptr() + op.bytes);
  const std::uint64_t t = now_ps() + delay.value();
  const std::uint64_t key = new_op_slot();
  ops_[key] = std::move(op);
  const Op& o = ops_[key];
  try {
    // A read first sends a request (one flit, one header) to the target.
    engine_->post(id, o.peer, o.read ? 1 : o.bytes, std::max(t, engine_->horizon()), key,
                  o.read ? fabric_core::TransferKind::read_request : fabric_core::TransferKind::write);
  } catch (const std::invalid_argument& e) {
    free_ops_.push_back(key);
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

void fabric_kernel::b_transport_tlm(int k, tlm::tlm_generic_payload& tx, sc_core::sc_time& delay) {
  tx.set_dmi_allowed(false);
  if (tx.get_command() == tlm::TLM_IGNORE_COMMAND) {
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (tx.get_byte_enable_ptr() != nullptr) {  // byte enables are not supported
    tx.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  const std::uint64_t bytes = tx.get_data_length();
  if (tx.get_streaming_width() < bytes) {
    tx.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  const fabric_core::AddressRegion* r = map_.decode(tx.get_address(), bytes);
  if (!r) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (bytes == 0) {  // nothing moves: no flit
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!tx.get_data_ptr()) {
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // A read of a timing-only memory (workload.data: false) takes its time and leaves the data untouched.
  Foreign& f = foreign_[k];
  if (!f.finished) {  // b_transport re-entered from a second thread on one socket
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const int self = endpoints_ + k;  // the initiator's endpoint rank in the timing core
  const std::uint64_t t = now_ps() + delay.value();
  Op op;
  op.requester = self;
  op.op = 0;
  op.read = tx.is_read();
  op.peer = r->rank;
  op.peer_addr = tx.get_address() - r->base;
  op.local_addr = 0;
  op.bytes = bytes;
  op.flag = -1;
  op.stage = 0;
  op.posted_ps = t;
  op.foreign = k;
  op.dest = op.read ? tx.get_data_ptr() : nullptr;
  if (!op.read) op.data.assign(tx.get_data_ptr(), tx.get_data_ptr() + bytes);
  const std::uint64_t key = new_op_slot();
  ops_[key] = std::move(op);
  const Op& o = ops_[key];
  try {
    engine_->post(self, o.peer, o.read ? 1 : o.bytes, std::max(t, engine_->horizon()), key,
                  o.read ? fabric_core::TransferKind::read_request : fabric_core::TransferKind::write);
  } catch (const std::invalid_argument&) {
    free_ops_.push_back(key);
    tx.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  // Inside b_transport the initiator sends nothing else: it no longer bounds the horizon.
  f.finished = false;
  --foreign_idle_;
  state_changed_.notify(sc_core::SC_ZERO_TIME);
  while (!f.finished) sc_core::wait(f.done);
  // LT with temporal decoupling: return at once, the time to completion annotated.
  const std::uint64_t now = now_ps();
  delay = sc_core::sc_time::from_value(f.end_ps > now ? f.end_ps - now : 0);
  tx.set_response_status(tlm::TLM_OK_RESPONSE);
}

void fabric_kernel::finish_foreign(int k, std::uint64_t t_ps) {
  Foreign& f = foreign_[k];
  f.finished = true;
  f.end_ps = t_ps;
  ++foreign_idle_;  // out of the fabric again: may send from now on
  f.done.notify(sc_core::SC_ZERO_TIME);
}

unsigned fabric_kernel::transport_dbg_tlm(int, tlm::tlm_generic_payload& tx) {
  const std::uint64_t global = tx.get_address();
  const fabric_core::AddressRegion* r = map_.decode(global, tx.get_data_length());
  if (!r || (tx.get_command() != tlm::TLM_IGNORE_COMMAND && !tx.get_data_ptr())) {
    tx.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  tx.set_address(global - r->base);
  const unsigned n = mem_out[r->rank]->transport_dbg(tx);
  tx.set_address(global);
  return n;
}

std::uint64_t fabric_kernel::new_op_slot() {
  if (!free_ops_.empty()) {
    const std::uint64_t k = free_ops_.back();
    free_ops_.pop_back();
    return k;
  }
  ops_.emplace_back();
  return ops_.size() - 1;
}

tlm::tlm_generic_payload& fabric_kernel::mem_payload(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                                                     std::uint64_t bytes) {
  tlm::tlm_generic_payload& tx = mem_tx_;
  tx.set_command(cmd);
  tx.set_address(addr);
  tx.set_data_ptr(data);
  tx.set_data_length(static_cast<unsigned>(bytes));
  tx.set_streaming_width(static_cast<unsigned>(bytes));
  tx.set_byte_enable_ptr(nullptr);
  tx.set_byte_enable_length(0);
  tx.set_dmi_allowed(false);
  tx.set_gp_option(tlm::TLM_MIN_PAYLOAD);
  tx.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  return tx;
}

void fabric_kernel::land(int rank, std::uint64_t addr, unsigned char* data, std::uint64_t bytes) {
  tlm::tlm_generic_payload& tx = mem_payload(tlm::TLM_WRITE_COMMAND, addr, data, bytes);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  mem_out[rank]->b_transport(tx, d);
  if (tx.is_response_error())
    fail("a write landed outside the memory of " + rank_names_[rank] + " at address " + std::to_string(addr));
}

void fabric_kernel::complete(const fabric_core::Completion& c) {
  Op& o = ops_[c.cookie];
  ++completions_;
  if (o.foreign >= 0 && (!o.read || o.stage == 1)) {
    if (!o.read) {
      land(o.peer, o.peer_addr, o.data.data(), o.bytes);
    } else if (!o.data.empty()) {
      std::memcpy(o.dest, o.data.data(), o.bytes);
    }
    std::vector<unsigned char>().swap(o.data);
    // No rank is woken: nothing in the accelerators' software waits on an
    // external initiator's data (no flag), and the instant may lie ahead of now.
    const int k = o.foreign;
    free_ops_.push_back(c.cookie);
    finish_foreign(k, c.time_ps);
    return;
  }
  if (!o.read) {
    land(o.peer, o.peer_addr, o.data.empty() ? nullptr : o.data.data(), o.bytes);
    if (o.flag >= 0) {
      std::uint64_t one = 1;
      land(o.peer, flag_address(o.flag), reinterpret_cast<unsigned char*>(&one), 8);
    }
    std::vector<unsigned char>().swap(o.data);
    ctl_[o.requester]->op_complete(o.op);
    if (op_trace_) op_trace_(o.requester, o.peer, false, o.bytes, o.posted_ps, c.time_ps);
    const int peer = o.peer, requester = o.requester;
    free_ops_.push_back(c.cookie);
    wake_rank(peer);
    wake_rank(requester);
    return;
  }
  if (o.stage == 0) {
    // Request reached the target: read its memory, send the data back.
    if (ctl_[o.peer]->functional()) o.data.assign(o.bytes, 0);
    tlm::tlm_generic_payload& tx =
        mem_payload(tlm::TLM_READ_COMMAND, o.peer_addr, o.data.empty() ? nullptr : o.data.data(), o.bytes);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    mem_out[o.peer]->b_transport(tx, d);
    if (tx.is_response_error())
      fail("a read of " + rank_names_[o.peer] + " at address " + std::to_string(o.peer_addr) +
           " is outside its memory");
    o.stage = 1;
    engine_->post(o.peer, o.requester, o.bytes, c.time_ps + ctl_[o.peer]->read_latency_ps(), c.cookie,
                  fabric_core::TransferKind::read_completion);
    return;
  }
  land(o.requester, o.local_addr, o.data.empty() ? nullptr : o.data.data(), o.bytes);
  std::vector<unsigned char>().swap(o.data);
  ctl_[o.requester]->op_complete(o.op);
  if (op_trace_) op_trace_(o.requester, o.peer, true, o.bytes, o.posted_ps, c.time_ps);
  const int requester = o.requester;
  free_ops_.push_back(c.cookie);
  wake_rank(requester);
}

void fabric_kernel::fail(const std::string& why) {
  std::ostringstream os;
  os << name() << ": " << why << " at t=" << std::max(now_ps(), engine_->now()) / 1000.0 << "ns";
  for (int r = 0; r < ranks_; ++r)
    if (state_[r] == rank_state::blocked) os << "\n  " << rank_names_[r] << " waits for " << ctl_[r]->waiting_for();
  os << "\n  fabric: " << engine_->diagnosis();
  SC_REPORT_ERROR("fabricsim/fabric_kernel", os.str().c_str());
  throw std::logic_error("unreachable");
}

std::string fabric_kernel::fmt_deadline(std::uint64_t next_ps) const {
  return fmt::format(
      "the next event, at t={:g} us, lies past the deadline of {:g} us simulated (run.deadline; raise it if the "
      "fabric is meant to be this slow, e.g. long propagation delays); stopped",
      static_cast<double>(next_ps) / 1e6, static_cast<double>(deadline_ps_) / 1e6);
}

void fabric_kernel::kernel_thread() {
  // A member, not a local: with external initiators the thread is still
  // suspended when the simulation ends, and its stack is never unwound.
  std::vector<fabric_core::Completion>& done = done_batch_;
  for (int r = 0; r < endpoints_; ++r)
    if (!ctl_[r]) fail("endpoint " + std::to_string(r) + " has no accelerator or memory attached");
  while (true) {
    // With external initiators the kernel serves them after the ranks finish.
    if (done_ == ranks_ && foreign_.empty()) break;
    const std::uint64_t h_sw = horizon();
    // An external initiator outside b_transport may send at now or later: the
    // core processes the events of instants up to now, never later ones.
    const std::uint64_t h_f = foreign_idle_ > 0 ? now_ps() + 1 : link::kNever;
    const std::uint64_t h = std::min(h_sw, h_f);
    done.clear();
    // Never simulate past the deadline: the watchdog bounds the core too.
    engine_->run(std::min(h, deadline_ps_ + 1), done);
    if (done.empty() && engine_->next_event_time() != link::kNever && engine_->next_event_time() > deadline_ps_ &&
        h > deadline_ps_)
      fail(fmt_deadline(engine_->next_event_time()));
    if (engine_->stalled()) fail("a link makes no progress");
    if (engine_->failed_direction() >= 0) {
      // A terminal failure is a result, not a malfunction: record it and stop.
      std::ostringstream os;
      os << name() << ": a link went down (retry limit) at t=" << std::max(now_ps(), engine_->now()) / 1000.0 << "ns; "
         << engine_->diagnosis();
      link_down_ = os.str();
      sc_core::sc_stop();
      return;
    }
    if (!done.empty()) {
      const std::uint64_t tc = done.front().time_ps;
      if (tc > deadline_ps_) fail(fmt_deadline(tc));
      // Transfers of external initiators only: nothing in SystemC waits for
      // that instant (b_transport annotates it; a read request's data is read
      // from a memory no rank can change before it, the core never passing
      // the ranks' horizon), so no wait.
      bool foreign_only = !foreign_.empty();  // (no scan on fabrics without external initiators)
      for (std::size_t i = 0; foreign_only && i < done.size(); ++i) foreign_only = ops_[done[i].cookie].foreign >= 0;
      if (tc > now_ps() && !foreign_only) sc_core::wait(sc_core::sc_time::from_value(tc - now_ps()));
      for (const auto& c : done) complete(c);
      if (progress_ && (completions_ >> 12) != ((completions_ - done.size()) >> 12)) progress_(tc, completions_);
      continue;
    }
    if (h == link::kNever) {
      // Nobody can post and the core has nothing left to do.
      if (engine_->next_event_time() == link::kNever) {
        if (done_ == ranks_) {  // only external initiators remain, all inside b_transport: cannot be
          sc_core::wait(state_changed_);
          continue;
        }
        fail(
            "deadlock: every unfinished rank is blocked and no fabric event is pending "
            "(data may be held in the timing core: TxReplay or blocked input buffers on UALink links, ordering points on a PCIe host)");
      }
      continue;
    }
    if (h > deadline_ps_) fail(fmt_deadline(h));
    if (h_sw <= h_f) {
      if (h > now_ps())
        sc_core::wait(sc_core::sc_time::from_value(h - now_ps()), state_changed_);
      else
        sc_core::wait(state_changed_);
      continue;
    }
    // Bound by an idle external initiator: follow SystemC time to the core's
    // next event (or the end of a computation), or until something posts.
    const std::uint64_t wake = std::min(h_sw, engine_->next_event_time());
    if (wake == link::kNever)
      sc_core::wait(state_changed_);
    else
      sc_core::wait(sc_core::sc_time::from_value(wake > now_ps() ? wake - now_ps() : 1), state_changed_);
  }
}

}  // namespace fabricsim::models
