#pragma once
// One direction pair of a UALink-style link: forward payload flits with
// TxReplay and FEC, reverse ACK / replay-request control (link-layer.md §1).
// Plain C++: the SystemC port (models/link/ualink_port.h) wraps it and gives
// it sockets; here the data-link machine advances in its own local time,
// flit by flit, with no kernel event per flit (platform.md §3).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "models/link/core/bit_errors.h"
#include "models/link/core/control_serializer.h"
#include "models/link/core/fec_profile.h"
#include "models/link/core/ge_channel.h"
#include "models/link/core/intern.h"
#include "models/link/core/policy.h"
#include "models/link/core/ring_queue.h"
#include "models/link/core/rx_inorder.h"
#include "models/link/core/tx_replay.h"
#include "models/link/core/types.h"

namespace fabricsim::link {

/// Modelling choices the paper leaves open (link-layer.md §2, §10). Every one
/// is a YAML parameter under `link.semantics`; docs/models/link.md explains each.
struct LinkSemantics {
  /// What the Gilbert-Elliott chain is indexed by: per_flit (payload sequence
  /// number; every attempt of flit s sees step s) or per_transmission (one step
  /// per transmission slot, replays included).
  enum class ChainIndex { per_flit, per_transmission } chain_index = ChainIndex::per_flit;
  /// Transmit path between admission and serializer: recall (no queue; a
  /// replay takes over the serializer at the next flit boundary) or fifo (a
  /// device queue: admitted flits are queued, a replay appends copies of the
  /// retained suffix behind what is queued, nothing queued is recalled).
  enum class TxQueue { recall, fifo } tx_queue = TxQueue::fifo;
  /// How the transmitter recognises the copies of one replay request:
  /// by_request (copies share an id; only a request caused by a new failure
  /// restarts the replay), ignore_window (after serving a request, ignore
  /// requests for `ignore_window_flits` received control flits, as UALink
  /// 1.0; can lose a genuine re-request), none (every copy restarts the replay).
  enum class RequestDedup { by_request, ignore_window, none } request_dedup = RequestDedup::by_request;
  std::uint32_t ignore_window_flits = 12;
  /// Which failed flits make the receiver request a replay: expected (only a
  /// failure of the expected sequence) or any_failure (every failed decode
  /// requests the expected sequence again).
  enum class RequestTrigger { expected, any_failure } request_trigger = RequestTrigger::expected;
  /// What the "replayed flits" counter counts: sent (retransmissions that
  /// reached the wire) or scheduled (every suffix entry a served request
  /// schedules, sent or not).
  enum class ReplayedCount { sent, scheduled } replayed_count = ReplayedCount::sent;
  /// FEC profile of a retransmission: policy (the policy's current choice) or
  /// strongest.
  enum class ReplayProfile { policy, strongest } replay_profile = ReplayProfile::policy;
  /// When a flit's profile is fixed: at serialization start, or (fifo queue
  /// only) when it is admitted into the queue.
  enum class ProfileBind { serialize, admit } profile_bind = ProfileBind::serialize;
  /// Delay before a decision made at the receiver is used by the transmitter, ps.
  ps_t feedback_delay_ps = 0;
  /// Coalesce a new ACK into a queued, not yet serialized ACK (extension; off).
  bool ack_coalescing = false;
};

/// Parameters of one link direction pair. Units in the names.
struct LinkConfig {
  std::uint32_t flit_bytes = 640;          ///< payload flit (DL reliability unit)
  double forward_rate_bps = 400e9;         ///< forward serializer, bits/s
  double reverse_rate_bps = 400e9;         ///< reverse control serializer, bits/s
  ps_t propagation_ps = 20000;             ///< one way
  ps_t control_base_delay_ps = 50000;      ///< before reverse serialization
  std::uint32_t control_flit_bytes = 640;  ///< ACK / request flit size
  std::uint32_t request_copies = 3;
  std::uint32_t retry_limit = 20;  ///< transmissions per flit
  /// Receive buffer at the far node, flits: the transmitter's credits (used by
  /// the fabric core; 0 = unlimited). Credits return after control_base_delay
  /// + propagation once the far node has consumed a flit.
  std::uint32_t rx_buffer_flits = 64;
  FecMenu fec_menu = default_fec_menu();
  /// Forward channel: the Gilbert-Elliott burst channel (`channel`, the
  /// paper's) or independent bit errors at `ber` on the forward wire
  /// (BitErrorStream, stream 2 x link id: the wire bits are the bits
  /// serialized so far, each transmission's flit x (1 + o_k) bytes in turn;
  /// a transmission's magnitude = its distinct `symbol_bits`-bit symbols
  /// holding an error bit). The reverse link is error free in both.
  enum class ChannelModel { gilbert_elliott, independent } channel_model = ChannelModel::gilbert_elliott;
  GeParams channel;
  double ber = 0.0;                 ///< independent: bit-error rate of the forward wire, [0, 0.5]
  std::uint32_t symbol_bits = 10;   ///< independent: FEC symbol size (RS(544,514): 10-bit symbols)
  std::string policy_name = "preface";  ///< fixed-strong | post-decode | predictive-fec | preface
  PolicyParams policy;                  ///< lambda, W_H, W_R, filter model, post-decode
  LinkSemantics semantics;
};

/// Counters of one link direction pair. Bytes are bytes, times ps.
struct LinkStats {
  std::uint64_t offered = 0, admitted = 0, delivered = 0;
  std::uint64_t transmissions = 0, first_transmissions = 0, retransmissions = 0;
  std::uint64_t replay_scheduled = 0;  ///< suffix entries scheduled by served requests
  std::uint64_t stale_copies = 0;      ///< queued copies sent after their ACK
  std::uint64_t fec_bytes = 0;         ///< parity bytes on the wire (flit_bytes x o_k per transmission)
  std::uint64_t retransmitted_bytes = 0;  ///< wire bytes (flit + parity) of every transmission after the first
  std::uint64_t control_flits = 0, control_bytes = 0, acks_coalesced = 0;
  std::uint64_t first_attempt_errors = 0;  ///< first transmissions with >= 1 raw symbol error
  std::uint64_t raw_errors = 0, residual_errors = 0;
  std::uint64_t duplicates_dropped = 0, out_of_order_dropped = 0;
  std::uint64_t requests_generated = 0, request_copies_received = 0, requests_served = 0, requests_ignored = 0;
  std::uint64_t terminal_failures = 0;
  std::uint64_t profile_switches = 0;
  std::vector<std::uint64_t> profile_transmissions;  ///< residency: transmissions per profile
  ps_t admission_stall_window_ps = 0, admission_stall_replay_ps = 0;
  ps_t admission_stall_credit_ps = 0;  ///< waiting for a credit (back-pressure)
  std::uint64_t max_occupancy = 0;
  ps_t first_arrival_ps = kNever, last_delivery_ps = 0;
};

/// One forward transmission, as reported to a transmit observer.
struct TxRecord {
  ps_t start_ps;            ///< serialization start
  std::uint64_t seq;        ///< payload sequence number
  std::uint32_t attempt;    ///< 1 = first transmission; 0 = stale copy of a released entry
  bool replay;              ///< sent by a replay
  std::size_t profile;      ///< FEC profile index
  std::uint32_t magnitude;  ///< raw symbol errors drawn (or scripted)
  std::uint64_t occupancy;  ///< TxReplay entries at serialization start
  std::uint32_t window;     ///< W_t in force at serialization start
};

/// Event-driven data-link machine of one link direction pair.
///
/// Use: offer() payload flit arrivals (non-decreasing times), then
/// run_before(t) to advance through every event earlier than t, or
/// run_to_completion() to deliver everything. Events at equal times are taken
/// in a fixed order (control arrival, decode completion, payload arrival,
/// serializer free), so runs are deterministic.
class LinkEngine {
 public:
  enum class Status : std::uint8_t { running, done, link_down, deadlock, deadline };

  /// Throws std::invalid_argument on an impossible configuration (empty FEC
  /// menu, zero window, zero rate, W_R > W_H, zero copies or retry limit).
  LinkEngine(const LinkConfig& cfg, std::unique_ptr<FecPolicy> policy, std::uint64_t seed, std::uint64_t link_id);

  /// Offer one payload flit arriving at `arrival_ps`; returns its sequence
  /// number. Throws std::logic_error if arrival is earlier than a previous
  /// arrival or than the time the engine already reached.
  std::uint64_t offer(ps_t arrival_ps);
  /// Process every event strictly earlier than `t_ps`.
  void run_before(ps_t t_ps);
  /// Run until every offered flit is delivered, the link goes down (retry
  /// limit), no event is left while flits are undelivered (deadlock), or the
  /// next event lies beyond `deadline_ps`. Returns the status; diagnosis()
  /// explains anything other than done.
  Status run_to_completion(ps_t deadline_ps = kNever);

  /// Time of the earliest pending event (kNever if none).
  ps_t next_event_time() const;
  /// Process exactly the earliest pending event (precondition: one exists).
  /// For a caller that interleaves many engines in global time order.
  void step() { process_next(); }

  /// Allocate the queues' buffers now (16 slots each, the size they get on
  /// first use; for the queues with inline slots, the buffer they spill to),
  /// e.g. so that the engines of a fabric and their buffers lie together in
  /// memory. Changes no result.
  void reserve_queues() {
    ctrl_.reserve(16);
    rx_pipe_.reserve(16);
    pending_.reserve(16);
    txq_.reserve(16);
    credit_returns_.reserve(16);
  }
  /// Prefetch, first stage: start loading the fields every event reads (a
  /// fabric calls it for the engine whose event comes next while it processes
  /// the current one; no field is read, so it costs no cache miss).
  void prefetch_state() const {
    const char* p = reinterpret_cast<const char*>(this);
    const char* const end = reinterpret_cast<const char*>(&channel_ + 1);
    for (; p < end; p += 64) __builtin_prefetch(p);
  }
  /// Prefetch, second stage (once prefetch_state() has had time to land):
  /// the queues' front slots and the policy's state, which those fields point to.
  void prefetch_queues() const {
    __builtin_prefetch(ctrl_.head_address());
    __builtin_prefetch(rx_pipe_.head_address());
    __builtin_prefetch(pending_.head_address());
    __builtin_prefetch(txq_.head_address());
    __builtin_prefetch(credit_returns_.head_address());
    // (Addresses as integers: a small policy object may end before the second line.)
    const std::uintptr_t pol = reinterpret_cast<std::uintptr_t>(policy_.get());
    __builtin_prefetch(reinterpret_cast<const void*>(pol));
    __builtin_prefetch(reinterpret_cast<const void*>(pol + 64));
  }
  /// Record per-flit arrival and delivery times (default on; arrival_time()
  /// and delivery_time() need it). Turn off before the first offer to keep
  /// memory flat on long multi-hop runs.
  void set_record_times(bool on) { record_times_ = on; }
  /// Lazy quiet events (default off): ACKs and serializer-free events that
  /// cannot change anything observable before this direction's next other
  /// event are not reported by next_event_time() and are applied, in time
  /// order, just before that event. Deliveries, stats and results are the
  /// same; only intermediate internal state (e.g. TxReplay occupancy between
  /// events) lags. Used by the fabric core to keep idle links off its queue.
  void set_lazy_quiet_events(bool on) { lazy_quiet_ = on; }
  /// Credit-based flow control toward the far node's receive buffer of
  /// `buffer_flits` flits (0 = off, the default): admitting a payload flit
  /// into TxReplay spends a credit; the far node gives it back with
  /// return_credit() when it has consumed the delivered flit. With no credit
  /// left, admission stalls (back-pressure). Call before the first offer.
  void enable_credits(std::uint32_t buffer_flits) {
    credits_on_ = buffer_flits > 0;
    credits_ = buffer_flits;
  }
  /// A credit arrives back at the transmitter at `t_ps` (>= now(); calls in
  /// non-decreasing time order).
  void return_credit(ps_t t_ps) { credit_returns_.push_back(t_ps); }
  std::uint32_t credits() const { return credits_; }
  /// Called whenever a payload flit is admitted into TxReplay (it left the
  /// admission queue: the output queue shrank by one).
  using AdmitHook = std::function<void(ps_t t)>;
  void set_admit_hook(AdmitHook f) { on_admit_ = std::move(f); }
  /// Called for every in-order delivery with (seq, time ps).
  using DeliveryHook = std::function<void(std::uint64_t seq, ps_t t)>;
  void set_delivery_hook(DeliveryHook f) { on_deliver_ = std::move(f); }
  /// Payload flits offered but not yet admitted into TxReplay (the output queue).
  std::uint64_t waiting() const { return offered_ - tx_.next_seq(); }
  /// Called every 2^12 events of run_before() / run_to_completion() with
  /// (now ps, flits delivered so far): a long run's progress line (the
  /// hook decides how often it prints). Off by default; no effect on results.
  using ProgressHook = std::function<void(ps_t now, std::uint64_t delivered)>;
  void set_progress_hook(ProgressHook f) { on_progress_ = std::move(f); }
  /// Most payload flits waiting for admission at once, as seen right after each offer().
  std::uint64_t max_waiting() const { return max_waiting_; }

  ps_t now() const { return now_; }
  Status status() const { return status_; }
  /// One-line state dump: sequence numbers, TxReplay, replay and queue state.
  std::string diagnosis() const;

  std::uint64_t delivered() const { return rx_.expected(); }
  /// Payload flits offered so far.
  std::uint64_t offered() const { return offered_; }
  ps_t arrival_time(std::uint64_t seq) const { return arrival_[seq]; }
  ps_t delivery_time(std::uint64_t seq) const { return delivery_[seq]; }
  /// Record each flit's first serialization start (default off; for
  /// first_transmission_time(); set before the first offer). Kept only while
  /// the flit is retained in TxReplay (a ring of its capacity): no per-flit
  /// record.
  void set_record_first_transmissions(bool on) { record_first_tx_ = on; }
  /// Start of the first serialization of flit `seq`, ps, with
  /// set_record_first_transmissions(true): valid from that serialization
  /// until the flit's TxReplay entry is released by a cumulative ACK, so in
  /// particular inside the delivery hook's call for `seq` (a flit is
  /// delivered before the ACK covering it is sent). Otherwise unspecified.
  ps_t first_transmission_time(std::uint64_t seq) const {
    return first_tx_.empty() ? kNever : first_tx_[seq & (first_tx_.size() - 1)];
  }
  /// Counters so far (a snapshot refreshed by each call: the engine keeps the
  /// per-event ones in its hot state and derives the rest).
  const LinkStats& stats() const;
  const LinkConfig& config() const { return cfg_; }
  const GilbertElliott& channel() const { return channel_; }
  /// Independent channel only: error bits consumed and wire bits serialized so far (0 otherwise).
  std::uint64_t wire_bit_errors() const { return bits_ ? bits_->consumed() : 0; }
  std::uint64_t wire_bits() const { return wire_bit_; }
  /// "Replayed flits" per the configured counting semantics.
  std::uint64_t replayed_flits() const;

  /// Error script (tests, fault injection): called for every transmission
  /// with (seq, attempt); a returned value >= 0 replaces the channel's raw
  /// error magnitude (0 = clean), -1 keeps the channel's draw.
  using ErrorScript = std::function<int(std::uint64_t seq, std::uint32_t attempt)>;
  void set_error_script(ErrorScript f) {
    script_ = std::move(f);
    traced_ = script_ || observer_;
  }
  /// Observer called for every forward transmission (tests, traces).
  using TxObserver = std::function<void(const TxRecord&)>;
  void set_tx_observer(TxObserver f) {
    observer_ = std::move(f);
    traced_ = script_ || observer_;
  }
  /// Policy currently deciding (read-only).
  const FecPolicy& policy() const { return *policy_; }
  const TxReplay& tx_replay() const { return tx_; }
  bool replay_active() const { return replay_active_; }

 private:
  struct InFlight {
    std::uint64_t seq;
    ps_t t_rx;
    std::uint32_t magnitude;
    std::uint8_t profile;
  };
  struct QueueItem {
    std::uint64_t seq;
    bool replay;
    std::int16_t profile;  // bound profile, -1 = choose at serialization
  };

  void process_next();
  void process_at(ps_t t);
  struct Heads {
    ps_t t;               // the earliest of them
    ps_t tc, td, ta, ts;  // control arrival, decode, payload arrival, serializer free (kNever: none)
  };
  // Without lazy quiet events every stream's head is an event: its time is
  // read once, then taken in the fixed order at equal times (as process_at).
  Heads eager_heads() const {
    Heads h;
    h.tc = ctrl_.next_arrival();
    h.td = rx_pipe_.empty() ? kNever : rx_pipe_.front().t_rx;
    h.ta = pending_.empty() ? kNever : pending_.front();
    h.ts = ser_busy_ ? ser_free_ : kNever;
    const ps_t tk =
        !credit_returns_.empty() && credits_ == 0 && arrived_ > tx_.next_seq() ? credit_returns_.front() : kNever;
    h.t = std::min(std::min(std::min(h.tc, h.td), std::min(h.ta, h.ts)), tk);
    return h;
  }
  void take(const Heads& h);
  void absorb_quiet_events();
  void handle_control();
  void handle_decode();
  void pump();
  bool gate_open() const {
    if (replay_active_ || arrived_ <= tx_.next_seq()) return false;
    if (credits_on_ && credits_ == 0) return false;
    return tx_.occupancy() < tx_decision_.window;
  }
  bool send_recall();
  void admit_into_queue();
  bool send_from_queue();
  void transmit(std::uint64_t seq, bool replay, int bound_profile);
  void serve_request(std::uint64_t seq);
  Decision tx_decision();
  void account_stall(bool gate_known_closed);
  void note_admission();
  void grow_first_tx();

  // Per-profile constants the per-flit path reads. They depend only on the
  // flit size, the forward rate, the propagation and the FEC menu, so the
  // table is interned: every engine of one link configuration shares it (a
  // fabric's 16,384 engines keep 8 bytes of it in their hot lines, not
  // 4 x 48, and the table stays in the caches); each engine keeps its
  // per-profile transmission counts (LinkStats::profile_transmissions,
  // fec_bytes and transmissions are derived from them).
  struct ProfileTiming {
    ps_t wire_ps;             // flit x (1 + o_k) at the forward rate
    std::uint64_t wire_bits;  // flit x (1 + o_k) x 8, rounded
    ps_t flight_ps;           // propagation + decode delay: serialization end -> decode completion
    std::uint64_t fec_bytes;  // parity bytes per flit
    std::uint32_t correctable;
    bool operator<(const ProfileTiming& o) const {
      return std::tie(wire_ps, wire_bits, flight_ps, fec_bytes, correctable) <
             std::tie(o.wire_ps, o.wire_bits, o.flight_ps, o.fec_bytes, o.correctable);
    }
  };
  static constexpr std::size_t kInlineProfiles = 4;  // larger menus count out of line
  const ProfileTiming& prof(std::size_t k) const { return prof_[k]; }
  // Profiles 0..3 count inline; a larger menu's further profiles out of line
  // (the test is on the index, so an inline count reads no cold field).
  std::uint64_t& prof_count(std::size_t k) {
    return k < kInlineProfiles ? count_[k] : count_more_[k - kInlineProfiles];
  }
  std::uint64_t prof_count(std::size_t k) const {
    return k < kInlineProfiles ? count_[k] : count_more_[k - kInlineProfiles];
  }

  // Layout: a fabric steps tens of thousands of engines in global time order, so
  // nearly every event finds its engine out of the L1 cache and pays one miss
  // per cache line it touches. What every event reads or writes comes first and
  // packed (the scalars, TxReplay, the queues, the semantics flags copied out of
  // the configuration, a pointer to the shared profile table and the per-profile
  // counts, the per-event counters); the configuration, rarely used state and
  // the statistics record come after it. The three queues nearly every event
  // reads the head of (control flits, decode pipe, arrivals) keep their first
  // slots inside the engine, sized to what they hold in the 1,024-accelerator
  // pod, so a short queue's head is in these lines (reached by prefetch_state())
  // and not in a separately allocated buffer; so does the transmit queue (its
  // first 2 slots: in the pod an admitted flit is usually sent before the next
  // is admitted, and its front was the costliest load of send_from_queue while
  // it lived in a heap buffer); the credit returns keep a 24-byte header and a
  // heap buffer.
  ps_t now_ = 0;
  std::uint64_t arrived_ = 0;
  TxReplay tx_;
  ps_t ser_free_ = 0;
  std::uint32_t credits_ = 0;
  Status status_ = Status::running;
  bool lazy_quiet_ = false;
  bool replay_active_ = false;
  bool ser_busy_ = false;
  ControlSerializer ctrl_;                // its first 4 control flits inline
  InlineRingQueue<InFlight, 4> rx_pipe_;  // decode pipe: first 4 slots inline
  InlineRingQueue<ps_t, 4> pending_;      // offered, not yet arrived: first 4 inline
  InlineRingQueue<QueueItem, 2> txq_;     // transmit queue: first 2 slots inline
  RingQueue<ps_t> credit_returns_;
  InOrderReceiver rx_;
  ps_t last_rx_ = 0;
  ps_t stall_since_ = kNever;
  std::uint64_t offered_ = 0;
  std::uint64_t max_waiting_ = 0;
  ps_t last_offer_ = 0;
  std::uint64_t tx_slot_ = 0;
  Decision tx_decision_;  // the decision in force at the transmitter (after the feedback delay)
  bool feedback_ = false;  // cfg_.semantics.feedback_delay_ps != 0
  bool credits_on_ = false;
  bool record_times_ = true;
  bool traced_ = false;  // an error script or a transmit observer is set
  bool record_first_tx_ = false;
  // cfg_.semantics, as flags
  bool fifo_ = true, bind_admit_ = false, per_flit_ = true, replay_strongest_ = false;
  std::int8_t stall_cause_ = 0;
  std::int16_t last_profile_ = -1;
  std::uint32_t profiles_ = 0;
  // Counters of every event (copied into stats_ by stats()).
  std::uint64_t first_transmissions_ = 0, first_attempt_errors_ = 0, raw_errors_ = 0, profile_switches_ = 0;
  std::uint64_t max_occupancy_ = 0;
  ps_t last_delivery_ps_ = 0;
  std::uint64_t ctrl_received_ = 0;
  std::unique_ptr<FecPolicy> policy_;
  std::unique_ptr<BitErrorStream> bits_;  // independent channel (null: Gilbert-Elliott)
  std::uint64_t wire_bit_ = 0;            // forward wire bits serialized so far
  AdmitHook on_admit_;
  DeliveryHook on_deliver_;
  const ProfileTiming* prof_ = nullptr;        // the interned table, one entry per profile
  std::uint64_t count_[kInlineProfiles] = {};  // transmissions per profile (menus of up to 4)
  GilbertElliott channel_;
  // ---- cold ----
  std::unique_ptr<std::uint64_t[]> count_more_;  // transmissions of profiles kInlineProfiles.. (larger menus)
  LinkConfig cfg_;
  std::string down_reason_;
  std::vector<ps_t> arrival_, delivery_;  // per seq, when record_times_
  std::vector<ps_t> first_tx_;            // when record_first_tx_: by seq mod a power of two >= TxReplay occupancy
  std::uint64_t replay_next_ = 0;
  std::uint64_t replay_items_queued_ = 0;
  std::uint64_t next_request_id_ = 0, last_served_request_ = 0;
  std::uint64_t ignore_until_ = 0;
  ps_t arrival_first_ps_ = kNever;
  RingQueue<std::pair<ps_t, Decision>> pending_decisions_;  // (no allocation until used: 16,384 engines in a pod)
  mutable LinkStats stats_;  // rare counters; the rest filled in by stats()
  ErrorScript script_;
  TxObserver observer_;
  ProgressHook on_progress_;
  std::uint64_t progress_events_ = 0;  // events of the run loops, for on_progress_
  void tick_progress() {
    if ((++progress_events_ & 0xFFF) == 0 && on_progress_) on_progress_(now_, rx_.expected());
  }
};

/// Human name of an engine status ("done", "link down", ...).
const char* to_string(LinkEngine::Status s);

}  // namespace fabricsim::link
