#pragma once
// A RIFL link: N bonded lanes, each a pair of RIFL cores (one per end) with
// the RTL's transmitter states and receiver event flags, go-back-N from a
// retransmit buffer, ON/OFF flow control, clock compensation, and the bonding
// layer's round-robin segments and reordering (rifl.md). Plain C++.
//
// Time is counted in frame slots of one lane (a frame of F bits at the lane
// rate). Lanes and ends advance slot by slot only while something happens;
// runs of clean frames between error events are skipped arithmetically
// (every lane streaming fresh data, nothing in flight but clean data).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/link/core/ge_channel.h"
#include "models/link/core/types.h"
#include "models/rifl/core/error_stream.h"
#include "models/rifl/core/frame.h"

namespace fabricsim::rifl {

/// Parameters of a RIFL link. Units in the names; defaults = rifl.md's
/// evaluation setup (4 lanes x 28 Gb/s, 10 m, 256-bit frames).
struct RiflConfig {
  std::uint32_t frame_bits = 256;  ///< 128 | 256 | 512 | 1024
  std::uint32_t lanes = 4;
  double lane_rate_bps = 28e9;  ///< per lane, bits/s (frames of frame_bits back to back)
  double cable_m = 10.0;
  double transceiver_ns = 80.0;  ///< one-way transceiver latency (rifl.md)
  double cable_ns_per_m = 3.34;
  std::vector<double> lane_skew_ns;     ///< extra one-way delay per lane (empty = none)
  std::uint32_t retransmit_buffer = 0;  ///< frames; 0 = the RTL formula (retransmit_buffer_rtl)
  std::uint32_t fc_buffer = 0;          ///< per-lane receive (reorder) buffer, frames; 0 = fc_on + 2H + 3B + 8
  std::uint32_t fc_on = 0;              ///< pause asserted at occupancy >= fc_on; 0 = derived
  std::uint32_t fc_off = 0;             ///< pause released at occupancy <= fc_off; 0 = derived
  double clock_offset_ppm = 0.0;        ///< end A's clock minus end B's, ppm (> 0: A faster)
  std::uint32_t resync_frames = 64;     ///< legal sync headers in a row to regain lock
  enum class Channel { independent, gilbert_elliott } channel = Channel::independent;
  double ber_ab = 0.0, ber_ba = 0.0;  ///< independent bit-error rates A->B, B->A
  link::GeParams ge;                  ///< burst channel (chain step = frame slot, or ge_step_bits)
  /// Gilbert-Elliott chain step: frame = one step per frame slot, a
  /// corrupted step flips m distinct bits of its frame (GilbertElliottFrames);
  /// flit = one step per fec_codeword_data_bits of frames (a 640-B flit, the
  /// UALink link's per-flit step) plus their FEC parity if fec_on, a corrupted
  /// step has m symbol errors of fec_symbol_bits (GilbertElliottWire).
  enum class GeStep { frame, flit } ge_step = GeStep::frame;
  /// false: the B->A direction is error free whatever the model (the UALink
  /// link's reverse link is; topologies/studies/link-protocols.yaml).
  bool errors_ba = true;
  /// Light FEC below RIFL on every lane (docs/models/rifl.md "Light FEC"):
  /// off unless fec_on. A codeword carries fec_codeword_data_bits of frames
  /// (5120: the FEC menu's 640-B flit, so the profile's overhead and
  /// correctable symbols mean what they mean on the UALink link) plus
  /// round(data x overhead) parity bits; it corrects up to `correctable`
  /// symbol errors of fec_symbol_bits. Its overhead is charged as longer
  /// frame slots (the lane's line rate is unchanged: a frame slot lasts
  /// n / K bit times), its latency as codeword accumulation (n bit times)
  /// plus the decode delay on the one-way delay.
  bool fec_on = false;
  link::FecProfile fec;
  std::uint32_t fec_symbol_bits = 10;
  std::uint32_t fec_codeword_data_bits = 5120;
  // Traffic: saturating packets in each loaded direction.
  std::uint64_t bytes_per_direction = 10'000'000'000ULL;
  std::uint32_t payload_min = 1, payload_max = 8192;  ///< bytes, uniform
  bool load_ba = true;                                ///< B->A loaded too
  std::uint64_t seed = 1;
  std::uint64_t deadline_slots = 0;  ///< 0 = derived watchdog
  /// Skip runs of clean frames arithmetically (default). Off: every slot of
  /// every lane is stepped; results are identical (a unit test checks it).
  bool skip_ahead = true;
  /// External traffic (a RIFL link inside a fabric): no packets are
  /// generated (the traffic keys above are ignored); the caller offers
  /// packets with offer_packet() and advances the link with advance().
  bool external = false;
};

/// Derived constants of a configuration (rifl.md formulas).
struct RiflDerived {
  double slot_ns;               ///< frame_bits / lane_rate
  double one_way_ns;            ///< transceiver + cable (no skew)
  double rtt_ns;                ///< 2 x one_way
  std::uint32_t delay_slots;    ///< ceil(one_way / slot): H, the half round trip in frames
  std::uint32_t buffer;         ///< retransmit buffer B, frames
  std::uint32_t fc_buffer;      ///< effective per-lane receive buffer, frames
  std::uint32_t fc_on, fc_off;  ///< effective thresholds
  std::uint32_t payload_bytes;  ///< (frame_bits - 16) / 8
  // Light FEC (fec_on): frames per codeword K, parity bits P, codeword bits n = K F + P.
  std::uint32_t fec_frames = 1, fec_parity_bits = 0;
  std::uint64_t fec_codeword_bits = 0;
  double fec_latency_ns = 0;  ///< codeword accumulation + decode delay (part of one_way_ns)
};

/// RTL sizing: 2^W frames, W = ceil(log2(16 + 16 + RTT x rate / frame_bits)).
/// derive() uses the link rate (lanes x lane rate) and the slowest lane's RTT,
/// at least two frame slots (the model's shortest one-way delay is one slot).
std::uint32_t retransmit_buffer_rtl(double rtt_ns, double rate_bps, std::uint32_t frame_bits);
/// The model's limits: a one-way delay (with the largest lane skew) of at
/// most 2^19 frame slots, a retransmit buffer of at most 2^20 frames.
constexpr double kMaxOneWaySlots = 1u << 19;
constexpr std::uint32_t kMaxRetransmitBuffer = 1u << 20;
/// Throws std::invalid_argument (message names the parameter) for an
/// impossible configuration: unsupported frame size, 0 lanes, BER outside
/// [0, 0.5], fc_on <= fc_off, fc_buffer < fc_on + 2H + 3B + 8, a retransmit
/// buffer below 32 + round trip frames, payload_min > payload_max, an FEC
/// codeword that is not a whole number of frames, a delay or buffer beyond
/// the limits above.
RiflDerived derive(const RiflConfig& c);

/// Memory a RiflLink of configuration `c` allocates for its lanes, bytes:
/// per lane, two ends' retransmit buffers of B frames and two directions'
/// frames in flight (the lane's one-way delay in slots, with its skew), 24
/// bytes a frame, plus each receiver's window flags. The traffic's own
/// records (packets) are not counted. Throws std::invalid_argument as derive().
std::uint64_t lane_state_bytes(const RiflConfig& c);
/// Memory of a RiflLink's generated traffic, bytes (an estimate, 0 with
/// external traffic): per packet of each loaded direction, its last segment
/// (8 bytes) and its latency (4 bytes, up to twice that while the vector
/// grows), at the mean payload (payload_min + payload_max) / 2.
std::uint64_t traffic_state_bytes(const RiflConfig& c);
/// Slots between the isolated-failure probe's scripted failures
/// (platform/sim/rifl_experiment.cpp): 4 (3B + 4H) + 4099, far past one
/// recovery's 3B + 4H slots and at counter phases spread over 0..4095.
std::uint64_t isolated_probe_spacing_slots(const RiflDerived& d);
/// Traffic per direction of the isolated-failure probe (bytes): saturating
/// through `failures` scripted failures isolated_probe_spacing_slots() apart
/// and two more spacings.
std::uint64_t isolated_probe_bytes_per_direction(const RiflConfig& c, const RiflDerived& d, std::uint64_t failures);
/// Scripted failures of the isolated-failure probe (the MTBF's out-of-order term).
constexpr std::uint64_t kIsolatedProbeFailures = 32;

/// Transmitter states (RTL rifl_tx.v).
enum class TxState : std::uint8_t { init, normal, send_pause, send_retrans, pause, retrans };
const char* to_string(TxState s);

/// Receiver event flags (RTL rifl_rx.v): the receiver keeps no protocol
/// state but these. The pause (retransmit) flag rises only after 8
/// consecutive recognised pause (retransmit) request frames, so one corrupted
/// frame cannot fake a control event; the retransmit flag drops after 16
/// consecutive data-or-idle frames; the pause flag drops on a delivered data
/// frame, 16 data-or-idle frames, or 8 retransmit requests.
struct RxEventFlags {
  static constexpr std::uint8_t kCtrlRun = 8, kDataOrIdleRun = 16;
  std::uint8_t pause_cnt = 0, retrans_cnt = 0, doi_cnt = kDataOrIdleRun;
  bool remote_pause = false, remote_retrans = false;
  /// One received frame. is_ctrl: a recognised control frame of `kind`;
  /// hdr_data: it has the DATA header; valid_out: an in-sequence data frame
  /// was delivered by it.
  void on_frame(bool is_ctrl, FrameKind kind, bool hdr_data, bool valid_out) {
    // A data frame (e.g. the far end's replay interleaving its requests
    // between replayed data) does not break a run; any other control frame,
    // an unrecognised frame or 16 data-or-idle frames in a row do. (The L1
    // RTL also resets on a data frame; that loses a request made during the
    // far end's replay: see docs/models/rifl.md.)
    auto run = [&](std::uint8_t c, FrameKind k) -> std::uint8_t {
      if (is_ctrl && kind == k) return std::min<std::uint8_t>(c + 1, kCtrlRun);
      return (hdr_data && !is_ctrl) ? c : 0;
    };
    pause_cnt = run(pause_cnt, FrameKind::ctrl_pause);
    retrans_cnt = run(retrans_cnt, FrameKind::ctrl_retrans);
    doi_cnt = (hdr_data || (is_ctrl && kind == FrameKind::ctrl_idle))
                  ? std::min<std::uint8_t>(doi_cnt + 1, kDataOrIdleRun)
                  : 0;
    if (doi_cnt >= kDataOrIdleRun) pause_cnt = retrans_cnt = 0;  // 16 data-or-idle frames end any run
    if (doi_cnt >= kDataOrIdleRun)
      remote_retrans = false;
    else if (retrans_cnt >= kCtrlRun)
      remote_retrans = true;
    if (pause_cnt >= kCtrlRun)
      remote_pause = true;
    else if (valid_out || doi_cnt >= kDataOrIdleRun || retrans_cnt >= kCtrlRun)
      remote_pause = false;
  }
  void reset_counts() { pause_cnt = retrans_cnt = doi_cnt = 0; }
  bool quiet() const {
    return !remote_pause && !remote_retrans && doi_cnt >= kDataOrIdleRun && pause_cnt == 0 && retrans_cnt == 0;
  }
};

/// Counters of one direction (A->B or B->A), summed over lanes.
struct DirectionStats {
  std::uint64_t packets = 0, payload_bytes = 0, segments = 0;
  std::uint64_t frames = 0;                ///< slots on the wire (all kinds)
  std::uint64_t fresh_data = 0;            ///< new valid data frames
  std::uint64_t retransmitted_frames = 0;  ///< data frames replayed from the retransmit buffer
  std::uint64_t idle_data = 0, fc_frames = 0;
  std::uint64_t ctrl_idle = 0, ctrl_pause = 0, ctrl_retrans = 0;
  std::uint64_t clock_comp_slots = 0;
  std::uint64_t hit_frames = 0, bit_errors = 0;
  std::uint64_t detected_errors = 0;    ///< receiver error flag rises (frame rejected)
  std::uint64_t undetected_errors = 0;  ///< corrupted frames that passed the CRC
  /// ... of which a replayed (older) frame whose error pattern's syndrome
  /// equals the XOR of its counter and the one expected: accepted out of order.
  std::uint64_t undetected_misordered = 0;
  std::uint64_t out_of_sync = 0;  ///< illegal sync headers
  std::uint64_t recoveries = 0;   ///< transmitter entries into Retrans
  std::uint64_t fc_pauses = 0;    ///< flow-control pause frames sent
  std::uint64_t delivered_segments = 0;
  std::uint64_t last_delivery_slot = 0;
  // Light FEC (fec_on), this direction's lanes: codewords corrected / failed, symbols corrected.
  std::uint64_t fec_corrected = 0, fec_failed = 0, fec_symbols_corrected = 0;
};

/// A recovery episode of one lane direction (trace output).
struct RecoveryEvent {
  std::uint32_t lane;
  int dir;  ///< 0 = A->B, 1 = B->A
  std::uint64_t start_slot, end_slot;
  std::uint64_t replayed;  ///< data frames replayed
  bool open = false;       ///< still recovering when the run ended (close_open_recoveries)
};

/// The simulation of one RIFL link.
class RiflLink {
 public:
  enum class Status { running, done, deadline, no_progress, overflow };

  /// Throws std::invalid_argument as derive() does.
  explicit RiflLink(const RiflConfig& c);
  ~RiflLink();

  /// Run to completion (every packet of both loaded directions delivered) or
  /// until the watchdog: no delivery for 64 x (3B + 2H) + 10^5 slots
  /// (no_progress), a lane direction whose last hopeless_hit_run() frames
  /// were all corrupted (no_progress), or the deadline. `progress`
  /// (optional) is called about every 2^24 slots with the fraction of
  /// segments delivered.
  Status run(const std::function<void(double)>& progress = {});

  const RiflConfig& config() const { return cfg_; }
  const RiflDerived& derived() const { return d_; }
  const DirectionStats& stats(int dir) const { return st_[dir]; }
  /// stats(dir) with the light FEC's codeword counters of that direction's lanes filled in.
  DirectionStats stats_with_fec(int dir) const;
  /// One-way latency of every delivered packet (packet in: the slot its first
  /// frame is serialized; out: the end of the slot its last frame is decoded,
  /// after reordering), in slots, both directions, in completion order.
  const std::vector<std::uint32_t>& latencies_slots() const { return lat_; }
  std::uint64_t slots() const { return now_; }
  /// Lane slots advanced without stepping them (clean runs, control and
  /// replay windows): a measure of the skip-ahead's reach.
  std::uint64_t skipped_lane_slots() const { return skipped_; }
  std::string diagnosis() const;
  Status status() const { return status_; }
  /// M: a lane direction whose last M frames were all hit ends a busy run
  /// with no_progress. Every recovery needs at least 9 intact frames (8
  /// consecutive retransmit requests to raise the far end's flag, then the
  /// replayed frame); at an intact-frame probability q the chance of one
  /// within `limit_slots` is below limit_slots x q^9, so a link that can
  /// progress at all (limit_slots x q^9 >= 1e-6) has q >= q_min =
  /// (1e-6 / limit_slots)^(1/9), and M consecutive hits on any of its 2N
  /// lane directions within the limit have probability 2N x limit_slots x
  /// (1 - q_min)^M <= 1e-9: M = ln(1e-9 / (2N limit_slots)) / ln(1 - q_min).
  /// Under the Gilbert-Elliott channel M also covers a BAD sojourn of that
  /// probability, ln(1e-9 / (2N limit_slots)) / ln(1 - b) chain steps (of a
  /// frame, or of a codeword's frames with chain_step flit). Never more than
  /// the slot watchdog's 64 x (3B + 2H) + 10^5. (Shipped link, 10^9 slots:
  /// M ~ 2,000; a fabric link, no deadline, limit 2^40 slots: M ~ 5,000.)
  std::uint64_t hopeless_hit_run(std::uint64_t limit_slots) const;
  /// Observer of recovery episodes (set before run()).
  void set_recovery_observer(std::function<void(const RecoveryEvent&)> f) { on_recovery_ = std::move(f); }
  /// At the end of a run: report every recovery episode still open (a lane
  /// direction not yet back to Normal) to the observer, ending at slots()
  /// with `open` set, so that the episodes' replayed frames add up to the
  /// retransmitted-frame counters. Applies the skipped windows first
  /// (settle()); call once, after the last run() / advance().
  void close_open_recoveries();

  /// Test hooks: force errors. `script(lane, dir, slot)` returns bit positions
  /// to flip in the frame sent at `slot` (replacing the error source's draw);
  /// return an empty vector for a clean frame. With a script set, the error
  /// sources are off and every slot is stepped unless Script::skip_ahead.
  struct Script {
    std::function<std::vector<std::uint16_t>(std::uint32_t lane, int dir, std::uint64_t slot, FrameKind kind)> flips;
    std::vector<std::uint64_t> slots;  ///< sorted slots at which flips() is consulted
    /// true: the slots between scripted ones are skipped as in a run with
    /// error sources (clean runs, recovery windows; RiflConfig::skip_ahead),
    /// every lane stepped at each scripted slot. Results are identical to
    /// stepping every slot (unit test RiflLink.ScriptedSkipAheadMatchesStepping).
    bool skip_ahead = false;
  };
  void set_script(Script s);
  /// Observer of every frame sent by a lane while it is stepped slot by slot
  /// (not during skipped runs, where every frame is fresh valid data).
  struct SentFrame {
    std::uint32_t lane;
    int dir;
    std::uint64_t slot;
    FrameKind kind;
    std::uint64_t counter;  ///< data-frame counter (data kinds)
    std::uint64_t seg;      ///< lane segment index (valid data)
    bool replay;
    TxState state;
  };
  void set_frame_observer(std::function<void(const SentFrame&)> f) { on_frame_ = std::move(f); }
  /// Observer of every segment delivered in order by a lane's receiver (before reordering).
  void set_delivery_observer(
      std::function<void(std::uint32_t lane, int dir, std::uint64_t seg, std::uint64_t slot)> f) {
    on_deliver_ = std::move(f);
  }
  /// Transmitter state of lane `lane`, end `side` (0 = A, 1 = B).
  TxState tx_state(std::uint32_t lane, int side) const;
  /// Count, from now on, every data frame that reaches an in-sync receiver
  /// expecting another counter (replayed older frames, frames in flight past
  /// a rolled-back counter), by the syndrome s = (frame counter ^ expected
  /// counter) & 0xFFF its error pattern would need to pass the check
  /// (s = 0, a counter 4096 apart, is not counted). With
  /// SyndromeDistribution (crc12.h) this gives the expected number of frames
  /// accepted out of order. Slot-stepped and skipped windows alike; the
  /// counts do not depend on skip_ahead.
  void count_mismatched_frames();
  /// The counts of frames sent in direction `dir` (4096 entries indexed by
  /// s, s = 0 always 0; empty unless count_mismatched_frames() was called).
  /// Apply settle() first for counts exact at slots().
  std::vector<std::uint64_t> mismatched_frames(int dir) const;

  // --- External traffic (RiflConfig::external) -----------------------------
  /// A packet that completed: its last frame was decoded and reordered in
  /// slot `slot` (it is out at the end of that slot, slot + 1).
  struct PacketDone {
    int dir;  ///< 0 = A->B, 1 = B->A
    std::uint64_t slot;
  };
  /// Offer one packet of `bytes` payload (>= 1; a packet occupies whole
  /// frames) in direction `dir` at the current slot slots(): its first
  /// segment may be serialized in that slot. Packets of a direction complete
  /// in offer order. Throws std::logic_error outside external mode.
  void offer_packet(int dir, std::uint64_t bytes);
  /// True while an offered packet of either direction is not yet delivered.
  bool busy() const;
  /// Advance through the slots before `until_slot` (idle lanes and clean
  /// runs arithmetically, as run() does), stopping early at the end of the
  /// first slot in which packets complete (they are then in completions()).
  /// While busy, no delivery for the watchdog's stall limit ends it with
  /// Status::no_progress (also a flow-control overflow ends it). Returns
  /// status() (running unless the link failed). Throws std::logic_error
  /// outside external mode.
  Status advance(std::uint64_t until_slot);
  /// Apply the recovery windows skipped so far (they are applied lazily), so
  /// that every counter is exact at slots(). Results do not depend on when
  /// it is called.
  void settle();
  /// Packets completed by the last advance(), in completion order.
  const std::vector<PacketDone>& completions() const { return done_; }

  struct Lane;  // internal

 private:
  struct Direction;
  void step_slot();
  bool iterate(std::uint64_t stop);
  std::uint64_t next_completion_in_run() const;
  bool streaming(std::uint32_t l, int dir) const;
  bool fc_change_after(std::uint64_t k) const;
  std::uint64_t fc_event_in_run(std::uint64_t n) const;
  void open_window(Lane& L, std::uint64_t t1);
  void settle_window(Lane& L, std::uint64_t t);
  void window_rx_counters(const Lane& L, std::uint64_t t0, std::uint64_t n, std::uint64_t rx_counter[2]);
  void complete_packets(int dir, std::uint64_t t0, std::uint64_t n);
  void check_flow_control();
  std::uint64_t next_disturbance() const;
  bool all_done() const;

  RiflConfig cfg_;
  RiflDerived d_;
  FrameCodec codec_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<Direction> dir_[2];
  DirectionStats st_[2];
  std::vector<std::uint32_t> lat_;
  bool record_done_ = false;
  std::vector<std::uint64_t> lat_done_;  // completion slot of each latency pushed while record_done_
  std::uint64_t now_ = 0;
  std::uint64_t skipped_ = 0;
  std::uint64_t last_progress_slot_ = 0;
  Status status_ = Status::running;
  std::string why_;
  std::function<void(const RecoveryEvent&)> on_recovery_;
  std::function<void(const SentFrame&)> on_frame_;
  std::function<void(std::uint32_t, int, std::uint64_t, std::uint64_t)> on_deliver_;
  Script script_;
  std::size_t script_pos_ = 0;
  std::vector<std::uint16_t> flips_;
  bool mm_on_ = false;
  // count_mismatched_frames(), per direction: counts by needed syndrome in
  // 13 dyadic levels (level k, entry y: +1 for each s in [y 2^k, (y+1) 2^k));
  // level 0 takes single frames, a window's replayed run of consecutive
  // counters takes O(log 4096) blocks.
  std::vector<std::uint64_t> mm_[2][13];
  void count_counter_run(int dir, std::uint64_t first, std::uint64_t n, std::uint64_t expected);
  bool delivered_now_[2] = {false, false};
  std::vector<std::uint64_t> jb_[2];  // per lane: segments delivered before a skipped run
  std::vector<PacketDone> done_;      // external mode: completions of the last advance()
  std::uint64_t stall_limit_ = 0;
  std::uint64_t hit_run_limit_ = ~0ULL;  // hopeless_hit_run() of this run's limit

  friend struct LaneAccess;
};

const char* to_string(RiflLink::Status s);

}  // namespace fabricsim::rifl
