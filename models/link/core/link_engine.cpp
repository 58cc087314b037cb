#include "models/link/core/link_engine.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace fabricsim::link {

const char* to_string(LinkEngine::Status s) {
  switch (s) {
    case LinkEngine::Status::running: return "running";
    case LinkEngine::Status::done: return "done";
    case LinkEngine::Status::link_down: return "link down (retry limit)";
    case LinkEngine::Status::deadlock: return "deadlock";
    case LinkEngine::Status::deadline: return "deadline exceeded";
  }
  return "?";
}

namespace {
void check_config(const LinkConfig& c) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (c.fec_menu.empty()) fail("FEC menu is empty");
  if (c.fec_menu.size() > 127) fail("FEC menu has more than 127 profiles");
  if (c.flit_bytes == 0 || c.control_flit_bytes == 0) fail("flit size must be > 0");
  if (!(c.forward_rate_bps > 0) || !(c.reverse_rate_bps > 0)) fail("link rates must be > 0");
  if (!(c.ber >= 0.0 && c.ber <= 0.5)) fail("ber must be in [0, 0.5]");
  if (c.symbol_bits == 0) fail("symbol size must be >= 1 bit");
  if (c.policy.window_high == 0 || c.policy.window_reduced == 0) fail("windows must be >= 1 flit");
  if (c.policy.window_reduced > c.policy.window_high) fail("W_R must not exceed W_H");
  if (c.request_copies == 0) fail("request copies must be >= 1");
  if (c.retry_limit == 0) fail("retry limit must be >= 1");
}
}  // namespace

LinkEngine::LinkEngine(const LinkConfig& cfg, std::unique_ptr<FecPolicy> policy, std::uint64_t seed,
                       std::uint64_t link_id)
    : now_((check_config(cfg), ps_t{0})),
      tx_(cfg.retry_limit),
      ctrl_(cfg.control_base_delay_ps, wire_time_ps(cfg.control_flit_bytes, cfg.reverse_rate_bps), cfg.propagation_ps,
            cfg.semantics.ack_coalescing),
      policy_(std::move(policy)),
      channel_(cfg.channel, seed, link_id),
      cfg_(cfg) {
  if (!policy_) throw std::invalid_argument("no policy");
  profiles_ = static_cast<std::uint32_t>(cfg_.fec_menu.size());
  if (profiles_ > kInlineProfiles) count_more_.reset(new std::uint64_t[profiles_ - kInlineProfiles]());
  std::vector<ProfileTiming> table;
  for (const FecProfile& p : cfg_.fec_menu)
    table.push_back({wire_time_ps(cfg_.flit_bytes * (1.0 + p.overhead), cfg_.forward_rate_bps),
                     static_cast<std::uint64_t>(cfg_.flit_bytes * (1.0 + p.overhead) * 8.0 + 0.5),
                     cfg_.propagation_ps + p.decode_delay_ps,
                     static_cast<std::uint64_t>(cfg_.flit_bytes * p.overhead + 0.5), p.correctable});
  prof_ = intern(table).data();
  // Independent channel: forward direction of link l is wire stream 2 l (the
  // RIFL link's lane 0, A->B, of the same seed is stream 0: the same wire bits).
  if (cfg_.channel_model == LinkConfig::ChannelModel::independent)
    bits_ = std::make_unique<BitErrorStream>(cfg_.ber, seed, 2 * link_id);
  const LinkSemantics& sem = cfg_.semantics;
  feedback_ = sem.feedback_delay_ps != 0;
  fifo_ = sem.tx_queue == LinkSemantics::TxQueue::fifo;
  bind_admit_ = sem.profile_bind == LinkSemantics::ProfileBind::admit;
  per_flit_ = sem.chain_index == LinkSemantics::ChainIndex::per_flit;
  replay_strongest_ = sem.replay_profile == LinkSemantics::ReplayProfile::strongest;
  tx_decision_ = policy_->decision();
}

const LinkStats& LinkEngine::stats() const {
  LinkStats& s = stats_;
  s.offered = offered_;
  s.admitted = tx_.next_seq();  // every admission takes the next sequence number
  s.delivered = rx_.expected();  // every in-order delivery advances it by one
  s.profile_transmissions.assign(profiles_, 0);
  s.transmissions = 0;
  s.fec_bytes = 0;
  for (std::size_t k = 0; k < profiles_; ++k) {
    const std::uint64_t n = prof_count(k);
    s.profile_transmissions[k] = n;
    s.transmissions += n;
    s.fec_bytes += n * prof(k).fec_bytes;
  }
  s.first_transmissions = first_transmissions_;
  s.first_attempt_errors = first_attempt_errors_;
  s.raw_errors = raw_errors_;
  s.profile_switches = profile_switches_;
  s.max_occupancy = max_occupancy_;
  s.first_arrival_ps = offered_ > 0 ? arrival_first_ps_ : kNever;
  s.last_delivery_ps = last_delivery_ps_;
  s.control_flits = ctrl_.flits_sent();
  s.control_bytes = s.control_flits * cfg_.control_flit_bytes;
  s.acks_coalesced = ctrl_.acks_coalesced();
  return s;
}

std::uint64_t LinkEngine::offer(ps_t t) {
  if ((offered_ > 0 && t < last_offer_) || t < now_)
    throw std::logic_error("LinkEngine::offer: arrival time goes backwards");
  if (offered_ == 0) arrival_first_ps_ = t;
  last_offer_ = t;
  pending_.push_back(t);
  if (record_times_) {
    arrival_.push_back(t);
    delivery_.push_back(kNever);
  }
  if (status_ == Status::done) status_ = Status::running;
  const std::uint64_t seq = offered_++;
  if (offered_ - tx_.next_seq() > max_waiting_) max_waiting_ = offered_ - tx_.next_seq();
  return seq;
}

ps_t LinkEngine::next_event_time() const {
  // Quiet events (only with set_lazy_quiet_events). While no payload waits
  // for admission, no replay runs and no replay request is on the reverse
  // link, a cumulative ACK only releases
  // TxReplay entries and a serializer-free event (with nothing queued) only
  // marks the serializer idle: neither changes anything observable before
  // this direction's next other event. They are not reported, and
  // process_next() still takes every event in true time order, so they are
  // applied, at their own times, before that next event. The answers are
  // unchanged; idle links of a large fabric stay off the global event queue.
  const bool quiet = lazy_quiet_ && arrived_ == tx_.next_seq() && !replay_active_;
  ps_t t = quiet && ctrl_.requests_queued() == 0 ? kNever : ctrl_.next_arrival();
  if (!rx_pipe_.empty()) t = std::min(t, rx_pipe_.front().t_rx);
  if (!pending_.empty()) t = std::min(t, pending_.front());
  if (ser_busy_ && !(quiet && txq_.empty())) t = std::min(t, ser_free_);
  // A returning credit matters only to a transmitter that has run out of
  // credits with payload waiting; otherwise it is applied (in time order, by
  // process_next) before the next event without being reported.
  if (!credit_returns_.empty() && credits_ == 0 && arrived_ > tx_.next_seq()) t = std::min(t, credit_returns_.front());
  return t;
}

void LinkEngine::process_next() {
  if (lazy_quiet_) absorb_quiet_events();
  // The earliest of every stream (in lazy mode this may be a quiet event that
  // next_event_time() does not report, e.g. an idle serializer freeing while
  // a replay request is on the reverse link).
  const ps_t tc = ctrl_.next_arrival();
  const ps_t td = rx_pipe_.empty() ? kNever : rx_pipe_.front().t_rx;
  const ps_t ta = pending_.empty() ? kNever : pending_.front();
  const ps_t ts = ser_busy_ ? ser_free_ : kNever;
  const bool need_credit = credits_on_ && credits_ == 0 && arrived_ > tx_.next_seq();
  const ps_t tk = credit_returns_.empty() || !need_credit ? kNever : credit_returns_.front();
  process_at(std::min(std::min(std::min(tc, td), std::min(ta, ts)), tk));
}

// Take the event(s) at `t`, the earliest of every stream (without lazy quiet
// events that is exactly next_event_time()).
void LinkEngine::process_at(ps_t t) {
  now_ = t;
  // A returning credit is an event of its own only for a transmitter that has
  // run out of credits with payload waiting (as next_event_time reports);
  // otherwise credits back by the next event are absorbed just before it.
  while (!credit_returns_.empty() && credit_returns_.front() <= t) {
    credit_returns_.pop_front();
    ++credits_;
  }
  // Equal times in a fixed order: control arrival, decode completion,
  // payload arrival, serializer free (none of them: only credits arrived).
  if (ctrl_.next_arrival() == t) {
    handle_control();
  } else if (!rx_pipe_.empty() && rx_pipe_.front().t_rx == t) {
    handle_decode();
  } else if (!pending_.empty() && pending_.front() == t) {
    pending_.pop_front();
    ++arrived_;
  } else if (ser_busy_ && ser_free_ == t) {
    ser_busy_ = false;
  }
  pump();
}

// Lazy mode: apply, in time order, the quiet events (ACKs and an idle
// serializer's free event, see next_event_time) that come strictly before the
// next reported event, without a pump between them: while quiet a pump after
// them does nothing, so the outcome is the same as taking them one by one.
void LinkEngine::absorb_quiet_events() {
  while (arrived_ == tx_.next_seq() && !replay_active_ && ctrl_.requests_queued() == 0) {
    // Everything next_event_time would report bounds the absorption (a busy
    // serializer with queued flits is reported: its next transmission must
    // see exactly the ACKs that arrived before it).
    const ps_t td = rx_pipe_.empty() ? kNever : rx_pipe_.front().t_rx;
    const ps_t ta = pending_.empty() ? kNever : pending_.front();
    const ps_t ts_busy = ser_busy_ && !txq_.empty() ? ser_free_ : kNever;
    const ps_t next_reported = std::min({td, ta, ts_busy});
    const ps_t tc = ctrl_.next_arrival();
    const ps_t ts = ser_busy_ && txq_.empty() ? ser_free_ : kNever;
    if (tc < next_reported && tc <= ts) {
      now_ = tc;
      handle_control();  // an ACK (no request is queued)
    } else if (ts < next_reported) {
      now_ = ts;
      ser_busy_ = false;
    } else {
      break;
    }
  }
}

void LinkEngine::take(const Heads& h) {
  now_ = h.t;
  while (!credit_returns_.empty() && credit_returns_.front() <= h.t) {
    credit_returns_.pop_front();
    ++credits_;
  }
  if (h.tc == h.t) {
    handle_control();
  } else if (h.td == h.t) {
    handle_decode();
  } else if (h.ta == h.t) {
    pending_.pop_front();
    // A flit arriving behind flits that already wait in a stall that goes on
    // (fifo, no feedback delay, no credits): the last pump left the window
    // closed (its admission loop ran last) and the serializer busy or nothing
    // queued, and one more waiting flit opens nothing, so pump() would only
    // find the same stall (its early return): skip it.
    const bool waited = arrived_++ > tx_.next_seq();
    if (waited && fifo_ && !feedback_ && !credits_on_ && stall_since_ != kNever && status_ == Status::running &&
        stall_cause_ == (replay_active_ ? 1 : 0))
      return;
  } else if (h.ts == h.t) {
    ser_busy_ = false;
  }
  pump();
}

void LinkEngine::run_before(ps_t t) {
  if (!lazy_quiet_) {
    while (status_ == Status::running) {
      const Heads h = eager_heads();
      if (h.t >= t) break;
      take(h);
      tick_progress();
    }
    return;
  }
  while (status_ == Status::running) {
    const ps_t next = next_event_time();
    if (next >= t) break;
    process_next();
    tick_progress();
  }
}

LinkEngine::Status LinkEngine::run_to_completion(ps_t deadline) {
  while (status_ == Status::running) {
    if (rx_.expected() == offered_) {
      status_ = Status::done;
      break;
    }
    const Heads h = lazy_quiet_ ? Heads{next_event_time(), 0, 0, 0, 0} : eager_heads();
    if (h.t == kNever) {
      status_ = Status::deadlock;
      break;
    }
    if (h.t > deadline) {
      status_ = Status::deadline;
      break;
    }
    if (lazy_quiet_)
      process_next();
    else
      take(h);
    tick_progress();
  }
  return status_;
}

Decision LinkEngine::tx_decision() {
  if (!feedback_) return tx_decision_;  // kept current by handle_decode
  while (!pending_decisions_.empty() && pending_decisions_.front().first <= now_) {
    tx_decision_ = pending_decisions_.front().second;
    pending_decisions_.pop_front();
  }
  return tx_decision_;
}


void LinkEngine::pump() {
  if (status_ != Status::running) return;
  if (feedback_) tx_decision();  // apply due decisions
  if (fifo_) {
    // (Each call is guarded by its cheapest exit so that the common event, with
    // nothing waiting for admission, costs a few compares.)
    if (gate_open()) admit_into_queue();
    if (!ser_busy_ && !txq_.empty()) {
      send_from_queue();
      if (gate_open()) admit_into_queue();
    }
    // The admission loop ran last and stopped: whatever still waits is blocked.
    if (arrived_ > tx_.next_seq() || stall_since_ != kNever) {
      // A stall that goes on with the same cause changes nothing (account_stall's common case).
      if (stall_since_ != kNever && arrived_ > tx_.next_seq() && status_ == Status::running && !credits_on_ &&
          stall_cause_ == (replay_active_ ? 1 : 0))
        return;
      account_stall(true);
    }
    return;
  }
  if (!ser_busy_) send_recall();
  account_stall(false);
}

void LinkEngine::account_stall(bool gate_known_closed) {
  const bool waiting = arrived_ > tx_.next_seq();
  if (!waiting && stall_since_ == kNever) return;  // the common case: nothing waits
  const bool blocked = waiting && status_ == Status::running && (gate_known_closed || !gate_open());
  // Cause: 0 window, 1 replay, 2 no credit (back-pressure: the window alone
  // would admit). Only the credit case needs the window.
  int cause = replay_active_ ? 1 : 0;
  if (blocked && cause == 0 && credits_on_ && credits_ == 0) {
    if (tx_.occupancy() < tx_decision_.window) cause = 2;
  }
  if (stall_since_ != kNever && (!blocked || stall_cause_ != cause)) {
    (stall_cause_ == 1   ? stats_.admission_stall_replay_ps
     : stall_cause_ == 2 ? stats_.admission_stall_credit_ps
                         : stats_.admission_stall_window_ps) += now_ - stall_since_;
    stall_since_ = kNever;
  }
  if (blocked && stall_since_ == kNever) {
    stall_since_ = now_;
    stall_cause_ = cause;
  }
}

void LinkEngine::note_admission() {
  if (tx_.occupancy() > max_occupancy_) max_occupancy_ = tx_.occupancy();
  if (credits_on_) --credits_;
  if (on_admit_) on_admit_(now_);
}

bool LinkEngine::send_recall() {
  if (replay_active_) {
    if (replay_next_ < tx_.oldest()) replay_next_ = tx_.oldest();
    if (replay_next_ < tx_.next_seq()) {
      const std::uint64_t s = replay_next_++;
      if (replay_next_ >= tx_.next_seq()) replay_active_ = false;
      transmit(s, true, -1);
      return true;
    }
    replay_active_ = false;
  }
  if (gate_open()) {
    const std::uint64_t s = tx_.admit();
    note_admission();
    transmit(s, false, -1);
    return true;
  }
  return false;
}

void LinkEngine::admit_into_queue() {
  const bool bind = bind_admit_;
  while (gate_open()) {
    const std::uint64_t s = tx_.admit();
    note_admission();
    const int prof = bind ? static_cast<int>(tx_decision().profile) : -1;
    txq_.emplace_back(s, false, static_cast<std::int16_t>(prof));
  }
}

bool LinkEngine::send_from_queue() {
  if (txq_.empty()) return false;
  const QueueItem it = txq_.front();
  txq_.pop_front();
  if (it.replay && --replay_items_queued_ == 0) replay_active_ = false;
  transmit(it.seq, it.replay, it.profile);
  return true;
}

void LinkEngine::transmit(std::uint64_t seq, bool replay, int bound_profile) {
  const std::uint32_t attempt = tx_.record_attempt(seq);
  if (attempt == TxReplay::kRetryExceeded) {
    ++stats_.terminal_failures;
    status_ = Status::link_down;
    std::ostringstream os;
    os << "flit seq " << seq << " exceeded the retry limit of " << cfg_.retry_limit << " transmissions";
    down_reason_ = os.str();
    return;
  }
  std::size_t prof;
  if (replay && replay_strongest_) {
    prof = profiles_ - 1;
  } else if (bound_profile >= 0) {
    prof = static_cast<std::size_t>(bound_profile);
  } else {
    prof = tx_decision().profile;
  }
  const std::uint64_t slot = tx_slot_++;
  // A stale queued copy of a released entry still draws its own outcome.
  const std::uint64_t attempt_key = attempt ? attempt - 1 : (1ULL << 32) + slot;
  const ProfileTiming& pt = this->prof(prof);
  ChannelDraw d;
  if (bits_) {  // independent: the symbols of this transmission's wire bits that hold an error bit
    d.magnitude = take_symbol_errors(*bits_, wire_bit_, pt.wire_bits, cfg_.symbol_bits);
    wire_bit_ += pt.wire_bits;
  } else {
    d = per_flit_ ? channel_.draw(seq, attempt_key) : channel_.draw(slot, 0);
  }
  if (traced_) {
    if (script_) {
      const int m = script_(seq, attempt);
      if (m >= 0) d.magnitude = static_cast<std::uint32_t>(m);
    }
    if (observer_) observer_({now_, seq, attempt, replay, prof, d.magnitude, tx_.occupancy(), tx_decision_.window});
  }

  ser_busy_ = true;
  ser_free_ = now_ + pt.wire_ps;
  ps_t t_rx = ser_free_ + pt.flight_ps;
  if (t_rx < last_rx_) t_rx = last_rx_;  // the decoder pipeline delivers in order
  last_rx_ = t_rx;
  rx_pipe_.emplace_back(seq, t_rx, d.magnitude, static_cast<std::uint8_t>(prof));

  ++prof_count(prof);
  if (last_profile_ >= 0 && static_cast<std::size_t>(last_profile_) != prof) ++profile_switches_;
  last_profile_ = static_cast<std::int16_t>(prof);
  if (attempt == 1) {
    ++first_transmissions_;
    if (d.magnitude > 0) ++first_attempt_errors_;
    if (record_first_tx_) {
      if (tx_.occupancy() > first_tx_.size()) grow_first_tx();
      first_tx_[seq & (first_tx_.size() - 1)] = now_;
    }
  } else {
    ++stats_.retransmissions;
    stats_.retransmitted_bytes += cfg_.flit_bytes + pt.fec_bytes;
    if (attempt == 0) ++stats_.stale_copies;
  }
}

// The first-transmission ring covers every retained entry (a first
// transmission's flit is retained): double it, keeping each entry's slot.
void LinkEngine::grow_first_tx() {
  std::size_t n = first_tx_.empty() ? 64 : first_tx_.size();
  while (n < tx_.occupancy()) n *= 2;
  std::vector<ps_t> bigger(n, kNever);
  if (!first_tx_.empty())
    for (std::uint64_t s = tx_.oldest(); s < tx_.next_seq(); ++s)
      bigger[s & (n - 1)] = first_tx_[s & (first_tx_.size() - 1)];
  first_tx_.swap(bigger);
}

void LinkEngine::handle_decode() {
  const InFlight f = rx_pipe_.front();
  rx_pipe_.pop_front();
  // Threshold model (link-layer.md §3): decodes iff magnitude <= c_k.
  const bool failed = f.magnitude > prof(f.profile).correctable;
  if (f.magnitude > 0) ++raw_errors_;
  policy_->observe({f.magnitude > 0, failed, f.profile});
  // A policy's decision changes only when it observes (FecPolicy): the
  // transmitter's copy is refreshed here, at once or after the feedback delay.
  if (!feedback_)
    tx_decision_ = policy_->decision();
  else
    pending_decisions_.emplace_back(now_ + cfg_.semantics.feedback_delay_ps, policy_->decision());
  const std::uint64_t expected_before = rx_.expected();
  switch (rx_.receive(f.seq, !failed)) {
    case InOrderReceiver::Verdict::deliver:
      if (record_times_) delivery_[f.seq] = now_;
      last_delivery_ps_ = now_;
      if (on_deliver_) on_deliver_(f.seq, now_);
      ctrl_.send_ack(now_, rx_.expected());
      break;
    case InOrderReceiver::Verdict::duplicate: ++stats_.duplicates_dropped; break;
    case InOrderReceiver::Verdict::out_of_order: ++stats_.out_of_order_dropped; break;
    case InOrderReceiver::Verdict::failed:
      ++stats_.residual_errors;
      if (f.seq == expected_before || cfg_.semantics.request_trigger == LinkSemantics::RequestTrigger::any_failure) {
        ++stats_.requests_generated;
        ctrl_.send_request(now_, expected_before, ++next_request_id_, cfg_.request_copies);
      }
      break;
  }
}

void LinkEngine::handle_control() {
  const ControlFlit c = ctrl_.pop();
  ++ctrl_received_;
  if (c.kind == ControlFlit::Kind::ack) {
    tx_.release_through(c.seq);
    return;
  }
  ++stats_.request_copies_received;
  bool serve = true;
  switch (cfg_.semantics.request_dedup) {
    case LinkSemantics::RequestDedup::by_request: serve = c.request_id > last_served_request_; break;
    case LinkSemantics::RequestDedup::ignore_window:
      serve = ctrl_received_ > ignore_until_;
      if (serve) ignore_until_ = ctrl_received_ + cfg_.semantics.ignore_window_flits;
      break;
    case LinkSemantics::RequestDedup::none: break;
  }
  if (!serve) {
    ++stats_.requests_ignored;
    return;
  }
  last_served_request_ = std::max(last_served_request_, c.request_id);
  serve_request(c.seq);
}

void LinkEngine::serve_request(std::uint64_t s) {
  if (s < tx_.oldest()) s = tx_.oldest();
  const std::uint64_t n = tx_.next_seq() - s;
  ++stats_.requests_served;
  stats_.replay_scheduled += n;
  if (n == 0) return;
  if (fifo_) {
    const int prof = bind_admit_ ? static_cast<int>(tx_decision().profile) : -1;
    for (std::uint64_t q = s; q < tx_.next_seq(); ++q) txq_.emplace_back(q, true, static_cast<std::int16_t>(prof));
    replay_items_queued_ += n;
    replay_active_ = true;
  } else {
    replay_active_ = true;
    replay_next_ = s;
  }
}

std::uint64_t LinkEngine::replayed_flits() const {
  return cfg_.semantics.replayed_count == LinkSemantics::ReplayedCount::scheduled ? stats_.replay_scheduled
                                                                                  : stats_.retransmissions;
}

std::string LinkEngine::diagnosis() const {
  std::ostringstream os;
  os << "status=" << to_string(status_);
  if (!down_reason_.empty()) os << " (" << down_reason_ << ")";
  os << " t=" << now_ / 1000.0 << "ns offered=" << offered_ << " delivered=" << rx_.expected()
     << " rx_expected=" << rx_.expected() << " txreplay=[" << tx_.oldest() << "," << tx_.next_seq() << ")"
     << " occupancy=" << tx_.occupancy() << " window=" << policy_->decision().window
     << " replay_active=" << (replay_active_ ? "yes" : "no") << " tx_queue=" << txq_.size()
     << " in_flight_fwd=" << rx_pipe_.size() << " in_flight_ctrl=" << ctrl_.in_flight()
     << " requests(served/ignored)=" << stats_.requests_served << "/" << stats_.requests_ignored;
  return os.str();
}

}  // namespace fabricsim::link
