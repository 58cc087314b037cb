#include "models/rifl/core/rifl_link.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "models/link/core/counter_rng.h"

namespace fabricsim::rifl {

using link::kNever;

namespace {
constexpr std::uint32_t kRollback = 16;  // RTL rx_decode ROLLBACK_CYCLES
constexpr std::uint64_t kStreamPacket = 21;

struct WireFrame {
  FrameKind kind = FrameKind::ctrl_idle;
  bool replay = false;
  bool hit = false;
  // What the receiver's decoder sees when hit (RxView, packed).
  std::uint8_t rx_header = 0;
  FrameKind rx_kind = FrameKind::ctrl_idle;
  bool bits_changed = false;
  std::uint16_t rx_check = 0;
  std::uint64_t counter = 0;
  std::uint64_t seg = 0;
};

struct Run {
  std::uint64_t j0, slot0, len;
};
}  // namespace

const char* to_string(TxState s) {
  switch (s) {
    case TxState::init: return "Init";
    case TxState::normal: return "Normal";
    case TxState::send_pause: return "Send Pause";
    case TxState::send_retrans: return "Send Retrans";
    case TxState::pause: return "Pause";
    case TxState::retrans: return "Retrans";
  }
  return "?";
}

const char* to_string(RiflLink::Status s) {
  switch (s) {
    case RiflLink::Status::running: return "running";
    case RiflLink::Status::done: return "done";
    case RiflLink::Status::deadline: return "deadline";
    case RiflLink::Status::no_progress: return "no progress";
    case RiflLink::Status::overflow: return "flow-control buffer overflow";
  }
  return "?";
}

std::uint32_t retransmit_buffer_rtl(double rtt_ns, double rate_bps, std::uint32_t frame_bits) {
  const double frames = 16.0 + 16.0 + rtt_ns * 1e-9 * rate_bps / frame_bits;
  const int w = static_cast<int>(std::ceil(std::log2(frames) - 1e-12));
  return 1u << std::clamp(w, 1, 31);  // 2^31: beyond every limit derive() enforces
}

RiflDerived derive(const RiflConfig& c) {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (c.frame_bits != 128 && c.frame_bits != 256 && c.frame_bits != 512 && c.frame_bits != 1024)
    bad("frame_bits: frame size must be 128, 256, 512 or 1024 bits");
  if (c.lanes == 0) bad("lanes: at least one lane is required");
  if (!(c.lane_rate_bps > 0)) bad("lane_rate: must be > 0");
  for (double b : {c.ber_ab, c.ber_ba})
    if (!(b >= 0.0 && b <= 0.5)) bad("ber: must be in [0, 0.5]");
  if (!c.lane_skew_ns.empty() && c.lane_skew_ns.size() != c.lanes) bad("lane_skew: one value per lane");
  if (c.payload_min < 1 || c.payload_min > c.payload_max) bad("payload_min: must be in [1, payload_max]");
  RiflDerived d;
  d.slot_ns = c.frame_bits / c.lane_rate_bps * 1e9;
  d.one_way_ns = c.transceiver_ns + c.cable_ns_per_m * c.cable_m;
  double frame_rate_share = 1.0;  // frame bits / wire bits
  if (c.fec_on) {
    if (c.fec_codeword_data_bits == 0 || c.fec_codeword_data_bits % c.frame_bits != 0)
      bad("fec: the codeword's " + std::to_string(c.fec_codeword_data_bits) + " data bits are not a whole number of " +
          std::to_string(c.frame_bits) + "-bit frames");
    if (c.fec_symbol_bits == 0) bad("fec: symbol size must be >= 1 bit");
    d.fec_frames = c.fec_codeword_data_bits / c.frame_bits;
    d.fec_parity_bits = static_cast<std::uint32_t>(std::llround(c.fec_codeword_data_bits * c.fec.overhead));
    d.fec_codeword_bits = c.fec_codeword_data_bits + d.fec_parity_bits;
    d.slot_ns = static_cast<double>(d.fec_codeword_bits) / d.fec_frames / c.lane_rate_bps * 1e9;
    d.fec_latency_ns = static_cast<double>(d.fec_codeword_bits) / c.lane_rate_bps * 1e9 + c.fec.decode_delay_ps / 1e3;
    d.one_way_ns += d.fec_latency_ns;
    frame_rate_share = static_cast<double>(c.fec_codeword_data_bits) / static_cast<double>(d.fec_codeword_bits);
  }
  d.rtt_ns = 2 * d.one_way_ns;
  // The key behind a delay that is too long: its largest part.
  const auto delay_key = [&c, &d]() {
    double skew = 0;
    for (double sk : c.lane_skew_ns) skew = std::max(skew, sk);
    const double cable = c.cable_ns_per_m * c.cable_m;
    const double fec = d.fec_latency_ns;  // the FEC profile's codeword and decode delay (0 without FEC)
    if (fec > skew && fec > cable && fec > c.transceiver_ns) return "fec";
    if (skew >= cable && skew >= c.transceiver_ns) return "lane_skew";
    return cable >= c.transceiver_ns ? "cable_length_m" : "transceiver_latency";
  };
  // Every lane direction holds a round trip in flight and every lane end B
  // frames: the one-way delay (with the largest skew) is bounded so that
  // these stay within what the model allocates (and the slot counts within 32 bits).
  {
    double skew = 0;
    for (double sk : c.lane_skew_ns) skew = std::max(skew, sk);
    const double slots = (d.one_way_ns + skew) / d.slot_ns;
    if (!(slots <= kMaxOneWaySlots))
      bad(std::string(delay_key()) + ": a one-way delay of " +
          std::to_string(static_cast<long long>(std::min(slots, 9e18))) +
          " frame slots (transceiver latency + cable + FEC + the largest lane skew) is beyond the model's limit of "
          "2^19 slots");
  }
  d.delay_slots = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(d.one_way_ns / d.slot_ns - 1e-9)));
  // The slowest lane (largest skew) sets the round trip every lane's buffer must cover.
  std::uint32_t max_delay = d.delay_slots;
  double max_skew = 0;
  for (double sk : c.lane_skew_ns) {
    if (sk < 0) bad("lane_skew: must be >= 0");
    max_skew = std::max(max_skew, sk);
    max_delay = std::max(max_delay, static_cast<std::uint32_t>(std::ceil((d.one_way_ns + sk) / d.slot_ns - 1e-9)));
  }
  const std::uint32_t rtt_frames = 2 * max_delay;
  // The formula's rate is the link's (all bonded lanes): with a single
  // lane's rate the buffer leaves a few frames of margin, and a request
  // delayed by a corrupted request frame or by the far end's own replay
  // outruns it (docs/models/rifl.md, "Retransmit buffer").
  // A one-way delay below one slot is modelled as one slot (delay_slots >= 1),
  // so the formula sees at least that round trip (else a zero delay would
  // give a buffer of 32 frames, below the model's own bound 32 + 2).
  d.buffer = c.retransmit_buffer ? c.retransmit_buffer
                                 : retransmit_buffer_rtl(std::max(2 * (d.one_way_ns + max_skew), 2 * d.slot_ns),
                                                         c.fec_on ? c.lanes * c.lane_rate_bps * frame_rate_share
                                                                  : c.lanes * c.lane_rate_bps,
                                                         c.frame_bits);
  // The replay must reach 16 frames before the failed one after the detection
  // round trip (RTL: 16 + 16 + RTT frames).
  if (d.buffer > kMaxRetransmitBuffer)
    bad(std::string(c.retransmit_buffer ? "retransmit_buffer" : delay_key()) + ": the round trip needs a retransmit buffer of " + std::to_string(d.buffer) +
        " frames, beyond the model's limit of 2^20 frames per lane end");
  if (d.buffer < 32 + rtt_frames)
    bad("retransmit_buffer: " + std::to_string(d.buffer) + " frames is smaller than the round trip bound 32 + " +
        std::to_string(rtt_frames) + " frames");
  // Flow control: after a pause is decided, up to a round trip of frames (the
  // pause frame's way out, the data already in flight back), one retransmit
  // sequence (3B slots during which the pause frame cannot leave) and 8 slots
  // of reaction still arrive; a resume leaves as many frames queued.
  const std::uint32_t headroom = 2 * max_delay + 3 * d.buffer + 8;
  // Defaults from the half round trip H: release at a round trip of frames
  // (2H + 8: the resume's way out and the new data's way back keep the
  // buffer from running dry), assert one round trip above, buffer = on + headroom.
  const std::uint32_t rt = 2 * max_delay + 8;
  d.fc_off = c.fc_off ? c.fc_off : rt;
  d.fc_on = c.fc_on ? c.fc_on : std::max(d.fc_off, rt) + rt;
  d.fc_buffer = c.fc_buffer ? c.fc_buffer : d.fc_on + headroom;
  if (d.fc_buffer < d.fc_on + headroom || d.fc_on == 0)
    bad("fc_buffer: " + std::to_string(d.fc_buffer) + " frames is below the round-trip bound fc_on + 2 x " +
        std::to_string(max_delay) + " + 3 x " + std::to_string(d.buffer) +
        " + 8 = " + std::to_string(d.fc_on + headroom) + " frames");
  if (d.fc_on <= d.fc_off) bad("fc_on: the pause (ON) threshold must be above the release (OFF) threshold");
  d.payload_bytes = (c.frame_bits - 16) / 8;
  return d;
}

// ---------------------------------------------------------------------------

struct RiflLink::Lane {
  struct End {
    // transmitter
    TxState state = TxState::normal;
    bool abnormal = false;
    std::uint32_t rc = 0;  // retransmit counter, 0..3B
    std::vector<WireFrame> buf;
    std::uint32_t head = 0;
    std::uint64_t tx_counter = 0;
    bool fc_paused = false;  // the far end asked us to stop valid data
    int pending_fc = 0;      // 1 = send pause, 2 = send resume
    std::uint64_t next_seg = 0, total_segs = 0;
    std::uint64_t comp_period = 0;
    std::deque<Run> runs;
    std::uint32_t steady = 0;
    bool steady_valid = false;
    bool in_rec = false;
    std::uint64_t rec_start = 0, rec_replayed = 0;
    // receiver (frames from the far end)
    bool rx_up = true;
    std::uint32_t sync_good = 0;
    bool rx_error = false;
    std::uint64_t counter = 0, threshold = 0;
    RxEventFlags fl;
    bool fc_asserted = false;
    std::uint64_t delivered = 0;
  };
  std::uint32_t index = 0;
  std::uint32_t D = 1;
  std::uint32_t pos = 0;  // now mod D
  End e[2];
  std::vector<WireFrame> pipe[2];
  std::unique_ptr<ErrorSource> err[2];
  std::uint64_t hit_at[2] = {kNever, kNever};  // err[x]->next_hit_slot(), cached
  // consecutive hit frames sent by end x (slots last_hit[x] - hit_run[x] + 1 .. last_hit[x])
  std::uint64_t hit_run[2] = {0, 0}, last_hit[2] = {kNever, kNever};
  bool quiescent = false;
  std::uint64_t q_since = 0, next_dist = kNever;
  // Window [win_since, win_end): the lane repeats itself with period 1 or 2
  // (open_window: control frames, the replay part of Retrans into a
  // rolled-back receiver, the Retrans <-> Send Retrans toggle); applied
  // lazily (settle_window).
  std::uint64_t win_since = 0, win_end = 0;
  FrameKind win_kind[2] = {FrameKind::ctrl_idle, FrameKind::ctrl_idle};
  std::uint64_t win_retry = 0;   // next slot at which a window is tried
  std::uint32_t win_backoff = 1;
  bool win_rep[2] = {false, false};  // end in the replay part of Retrans
  bool win_tog[2] = {false, false};  // end toggling Retrans <-> Send Retrans
  // Receiver flags after i window slots: win_fl[x][i] for i <= win_T[x] + 1,
  // then period 2 (win_fl[x][win_T[x] + ((i - win_T[x]) & 1)]).
  // (D frames in flight, then at most kTrajSlack until period 2: the
  // counters saturate at 8 and 16)
  static constexpr std::uint32_t kTrajSlack = 48;
  std::vector<std::uint16_t> win_fl[2];  // packed (pack())
  std::uint32_t win_T[2] = {0, 0};
};

struct RiflLink::Direction {
  std::vector<std::uint64_t> last_seg;  // per packet
  std::uint64_t K = 0;
  std::size_t next_pkt = 0;
  std::uint64_t F = 0;
};

namespace {
// One-way delay of lane l in frame slots (its skew included, at least one):
// the length of the lane's pipes.
std::uint32_t lane_delay_slots(const RiflConfig& c, const RiflDerived& d, std::uint32_t l) {
  const double skew = l < c.lane_skew_ns.size() ? c.lane_skew_ns[l] : 0.0;
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil((d.one_way_ns + skew) / d.slot_ns - 1e-9)));
}
}  // namespace

RiflLink::RiflLink(const RiflConfig& c) : cfg_(c), d_(derive(c)), codec_(c.frame_bits) {
  const std::uint32_t N = c.lanes, B = d_.buffer;
  for (int dir = 0; dir < 2; ++dir) {
    dir_[dir] = std::make_unique<Direction>();
    auto& D = *dir_[dir];
    if ((dir == 1 && !c.load_ba) || c.external) continue;
    std::uint64_t bytes = 0, seg = 0, p = 0;
    const std::uint64_t span = static_cast<std::uint64_t>(c.payload_max) - c.payload_min + 1;
    while (bytes < c.bytes_per_direction) {
      const double u = link::to_unit(link::key_hash(c.seed, 1000 + dir, p++, 0, kStreamPacket));
      const std::uint64_t P = c.payload_min + std::min<std::uint64_t>(span - 1, static_cast<std::uint64_t>(u * span));
      bytes += P;
      seg += (P + d_.payload_bytes - 1) / d_.payload_bytes;
      D.last_seg.push_back(seg - 1);
    }
    D.K = seg;
    st_[dir].packets = D.last_seg.size();
    st_[dir].payload_bytes = bytes;
    st_[dir].segments = seg;
  }
  // Clock compensation: the faster end skips one slot every 1e6 / |ppm| slots.
  const std::uint64_t comp =
      c.clock_offset_ppm != 0.0 ? static_cast<std::uint64_t>(std::llround(1e6 / std::fabs(c.clock_offset_ppm))) : 0;
  for (std::uint32_t l = 0; l < N; ++l) {
    auto L = std::make_unique<Lane>();
    L->index = l;
    L->D = lane_delay_slots(c, d_, l);
    for (int x = 0; x < 2; ++x) {
      auto& e = L->e[x];
      // Start with the link up: the buffer holds B idle data frames (the RTL's
      // Init fill), counters aligned at B.
      e.buf.assign(B, WireFrame{});
      for (std::uint32_t i = 0; i < B; ++i) {
        e.buf[i].kind = FrameKind::data_idle;
        e.buf[i].counter = i;
      }
      e.tx_counter = B;
      e.counter = e.threshold = B;
      const std::uint64_t K = dir_[x]->K;
      e.total_segs = K > l ? (K - l + N - 1) / N : 0;
      if ((x == 0 && c.clock_offset_ppm > 0) || (x == 1 && c.clock_offset_ppm < 0)) e.comp_period = comp;
      L->pipe[x].assign(L->D, WireFrame{});
      L->win_fl[x].resize(L->D + Lane::kTrajSlack);
      const std::uint64_t stream = 2ULL * l + x;
      const bool ge = c.channel == RiflConfig::Channel::gilbert_elliott;
      if (x == 1 && !c.errors_ba) {
        L->err[x] = std::make_unique<IndependentBitErrors>(0.0, c.frame_bits, c.seed, stream);
      } else if (c.fec_on || (ge && c.ge_step == RiflConfig::GeStep::flit)) {
        // The wire's error bits, sliced into frames (and codewords, with FEC).
        std::unique_ptr<WireErrors> w;
        if (ge)
          w = std::make_unique<GilbertElliottWire>(
              c.ge, c.seed, stream,
              c.ge_step == RiflConfig::GeStep::frame ? c.frame_bits
              : c.fec_on                             ? d_.fec_codeword_bits
                                                     : c.fec_codeword_data_bits,
              c.fec_symbol_bits);
        else
          w = std::make_unique<IndependentWire>(x == 0 ? c.ber_ab : c.ber_ba, c.seed, stream);
        L->err[x] = std::make_unique<WireFrames>(std::move(w), c.frame_bits, d_.fec_frames, d_.fec_parity_bits,
                                                 c.fec_symbol_bits,
                                                 c.fec_on ? static_cast<int>(c.fec.correctable) : -1);
      } else if (!ge) {
        L->err[x] = std::make_unique<IndependentBitErrors>(x == 0 ? c.ber_ab : c.ber_ba, c.frame_bits, c.seed, stream);
      } else {
        L->err[x] = std::make_unique<GilbertElliottFrames>(c.ge, c.frame_bits, c.seed, stream);
      }
      L->hit_at[x] = L->err[x]->next_hit_slot();
    }
    lanes_.push_back(std::move(L));
  }
}

std::uint64_t lane_state_bytes(const RiflConfig& c) {
  const RiflDerived d = derive(c);
  std::uint64_t total = 0;
  for (std::uint32_t l = 0; l < c.lanes; ++l) {
    const std::uint64_t D = lane_delay_slots(c, d, l);
    total += (2 * static_cast<std::uint64_t>(d.buffer) + 2 * D) * sizeof(WireFrame) +
             2 * (D + RiflLink::Lane::kTrajSlack) * sizeof(std::uint16_t);
  }
  return total;
}

std::uint64_t traffic_state_bytes(const RiflConfig& c) {
  if (c.external) return 0;
  const std::uint64_t mean = std::max<std::uint64_t>(1, (std::uint64_t{c.payload_min} + c.payload_max) / 2);
  const std::uint64_t packets = c.bytes_per_direction / mean + 1;
  return packets * (8 + 2 * 4) * (c.load_ba ? 2 : 1);
}

std::uint64_t isolated_probe_spacing_slots(const RiflDerived& d) {
  return 4ULL * (3ULL * d.buffer + 4ULL * d.delay_slots) + 4099;
}

std::uint64_t isolated_probe_bytes_per_direction(const RiflConfig& c, const RiflDerived& d, std::uint64_t failures) {
  return (failures + 2) * isolated_probe_spacing_slots(d) * c.lanes * d.payload_bytes;
}

RiflLink::~RiflLink() = default;

void RiflLink::set_script(Script s) {
  script_ = std::move(s);
  script_pos_ = 0;
  if (script_.skip_ahead) {
    // The next scripted slot is every lane's next possible hit: clean runs
    // and windows end there, so every lane is stepped in it.
    const auto it = std::lower_bound(script_.slots.begin(), script_.slots.end(), now_);
    const std::uint64_t next = it == script_.slots.end() ? kNever : *it;
    for (auto& L : lanes_) L->hit_at[0] = L->hit_at[1] = next;
  }
}

DirectionStats RiflLink::stats_with_fec(int dir) const {
  DirectionStats s = st_[dir];
  for (const auto& L : lanes_)
    if (const auto* w = dynamic_cast<const WireFrames*>(L->err[dir].get())) {
      s.fec_corrected += w->codewords_corrected();
      s.fec_failed += w->codewords_failed();
      s.fec_symbols_corrected += w->symbols_corrected();
    }
  return s;
}

TxState RiflLink::tx_state(std::uint32_t lane, int side) const { return lanes_.at(lane)->e[side].state; }

bool RiflLink::all_done() const {
  for (int d = 0; d < 2; ++d)
    if (dir_[d]->next_pkt < dir_[d]->last_seg.size()) return false;
  return true;
}

namespace {
inline WireFrame ctrl(FrameKind k) {
  WireFrame f;
  f.kind = k;
  return f;
}
}  // namespace

// Transmitter transition after sending one frame (RTL rifl_tx.v priority
// order) from state s with retransmit counter rc and the local receiver's
// inputs: rx up, rx error, remote pause, remote retransmit. Normal's
// abnormal (pipeline drain) slot is updated in place.
static inline TxState next_tx(TxState s, bool& abnormal, std::uint32_t rc, std::uint32_t B, bool up, bool re, bool rp,
                       bool rr) {
  TxState ns = s;
  switch (s) {
    case TxState::init: ns = TxState::send_pause; break;
    case TxState::normal:
      if (!abnormal) {
        if (rr || rp || re || !up) abnormal = true;
      } else {
        abnormal = false;
        ns = !up  ? TxState::send_pause
             : rp ? TxState::pause
             : rr ? TxState::retrans
             : re ? TxState::send_retrans
                  : TxState::normal;
      }
      break;
    case TxState::send_pause:
      if (up)
        ns = rp                ? TxState::pause
             : (rr || rc != 0) ? TxState::retrans
             : re              ? TxState::send_retrans
                               : TxState::normal;
      break;
    case TxState::send_retrans:
      ns = !up               ? TxState::send_pause
           : rp              ? TxState::pause
           : (rr || rc != 0) ? TxState::retrans
           : !re             ? TxState::normal
                             : TxState::send_retrans;
      break;
    case TxState::pause:
      if (!up)
        ns = TxState::send_pause;
      else if (!rp)
        ns = (rr || rc != 0) ? TxState::retrans : re ? TxState::send_retrans : TxState::normal;
      break;
    case TxState::retrans:
      if (!up)
        ns = TxState::send_pause;
      else if (rp)
        ns = TxState::pause;
      else if (!rr && rc >= 2 * B)
        ns = re ? TxState::send_retrans : TxState::normal;
      break;
  }
  return ns;
}

// One slot of every lane; lanes in a clean run advance arithmetically.
void RiflLink::step_slot() {
  const std::uint64_t t = now_;
  const std::uint32_t B = d_.buffer;
  const bool scripted = static_cast<bool>(script_.flips);
  while (scripted && script_pos_ < script_.slots.size() && script_.slots[script_pos_] < t) ++script_pos_;
  const bool script_now = scripted && script_pos_ < script_.slots.size() && script_.slots[script_pos_] == t;
  const bool skip = cfg_.skip_ahead && (!scripted || script_.skip_ahead);
  // Script::skip_ahead: the scripted slot after this one (each lane's next hit_at once stepped here).
  std::uint64_t script_next = kNever;
  if (script_now && script_.skip_ahead) {
    const auto it =
        std::upper_bound(script_.slots.begin() + static_cast<std::ptrdiff_t>(script_pos_), script_.slots.end(), t);
    if (it != script_.slots.end()) script_next = *it;
  }
  for (auto& Lp : lanes_) {
    Lane& L = *Lp;
    const std::size_t pi = L.pos;  // t mod D: this slot's place in the pipes
    L.pos = L.pos + 1 == L.D ? 0 : L.pos + 1;
    if (L.win_end) {
      if (t < L.win_end) continue;
      settle_window(L, L.win_end);
    }
    if (L.quiescent) {
      if (t < L.next_dist) {
        ++skipped_;
        for (int x = 0; x < 2; ++x) {
          auto& s = L.e[x];
          auto& r = L.e[1 - x];
          ++s.tx_counter;
          ++r.counter;
          ++r.threshold;
          ++st_[x].frames;
          if (s.steady_valid) {
            ++s.next_seg;
            ++s.runs.back().len;
            ++st_[x].fresh_data;
          } else {
            ++st_[x].idle_data;
          }
          // the frame sent at t - D (fresh valid data too) arrives now
          if (s.steady_valid) {
            ++r.delivered;
            ++st_[x].delivered_segments;
            st_[x].last_delivery_slot = t;
            delivered_now_[x] = true;
            last_progress_slot_ = t;
          }
        }
        continue;
      }
      // Materialize the frames a clean run left implicit: the last min(n, D)
      // frames in flight and the last min(n, B) frames of the retransmit buffer.
      const std::uint64_t n = t - L.q_since;
      for (int x = 0; x < 2; ++x) {
        auto& s = L.e[x];
        auto mk = [&](std::uint64_t back) {
          WireFrame f;
          f.kind = s.steady_valid ? FrameKind::data_valid : FrameKind::data_idle;
          f.counter = s.tx_counter - back;
          f.seg = s.steady_valid ? s.next_seg - back : 0;
          return f;
        };
        const std::uint64_t m = std::min<std::uint64_t>(n, L.D);
        for (std::uint64_t k = m; k >= 1; --k) L.pipe[x][(t - k) % L.D] = mk(k);
        const std::uint64_t mb = std::min<std::uint64_t>(n, B);
        s.head = static_cast<std::uint32_t>((s.head + (n - mb)) % B);
        for (std::uint64_t k = mb; k >= 1; --k) {
          s.buf[s.head] = mk(k);
          s.head = s.head + 1 == B ? 0 : s.head + 1;
        }
      }
      L.quiescent = false;
    }
    // --- transmitters
    WireFrame out[2];
    for (int x = 0; x < 2; ++x) {
      auto& e = L.e[x];
      auto& S = st_[x];
      WireFrame& f = out[x];  // default-initialized
      const TxState s = e.state;
      bool fresh = false;
      switch (s) {
        case TxState::normal:
          if (e.abnormal) {
            f = ctrl(FrameKind::ctrl_idle);
          } else if (e.comp_period && (t % e.comp_period) == e.comp_period - 1) {
            f = ctrl(FrameKind::ctrl_idle);
            ++S.clock_comp_slots;
          } else {
            fresh = true;
            if (e.pending_fc) {
              f.kind = e.pending_fc == 1 ? FrameKind::fc_pause : FrameKind::fc_resume;
              if (e.pending_fc == 1) ++st_[1 - x].fc_pauses;
              e.pending_fc = 0;
              ++S.fc_frames;
            } else if (!e.fc_paused && e.next_seg < e.total_segs) {
              f.kind = FrameKind::data_valid;
              f.seg = e.next_seg++;
              ++S.fresh_data;
              if (!e.runs.empty() && e.runs.back().slot0 + e.runs.back().len == t &&
                  e.runs.back().j0 + e.runs.back().len == f.seg)
                ++e.runs.back().len;
              else
                e.runs.push_back({f.seg, t, 1});
            } else {
              f.kind = FrameKind::data_idle;
              ++S.idle_data;
            }
            f.counter = e.tx_counter++;
            e.buf[e.head] = f;
            e.head = e.head + 1 == B ? 0 : e.head + 1;
          }
          break;
        case TxState::retrans:
          if (e.rc < 2 * B && (e.rc & 1u) == 0) {
            f = e.buf[e.head];
            f.replay = true;
            f.hit = false;
            e.head = e.head + 1 == B ? 0 : e.head + 1;
            ++S.retransmitted_frames;
            ++e.rec_replayed;
          } else {
            f = ctrl(e.rx_error ? FrameKind::ctrl_retrans : FrameKind::ctrl_idle);
          }
          break;
        case TxState::pause: f = ctrl(FrameKind::ctrl_idle); break;
        case TxState::init:
        case TxState::send_pause: f = ctrl(FrameKind::ctrl_pause); break;
        case TxState::send_retrans: f = ctrl(FrameKind::ctrl_retrans); break;
      }
      switch (f.kind) {
        case FrameKind::ctrl_idle: ++S.ctrl_idle; break;
        case FrameKind::ctrl_pause: ++S.ctrl_pause; break;
        case FrameKind::ctrl_retrans: ++S.ctrl_retrans; break;
        default: break;
      }
      ++S.frames;
      // transition (RTL rifl_tx.v priority order)
      const TxState ns =
          next_tx(s, e.abnormal, e.rc, B, e.rx_up, e.rx_error, e.fl.remote_pause, e.fl.remote_retrans);
      if (s == TxState::retrans) e.rc = e.rc >= 3 * B ? 0 : e.rc + 1;
      if (ns == TxState::retrans && s != TxState::retrans) {
        ++S.recoveries;
        if (!e.in_rec) {
          e.in_rec = true;
          e.rec_start = t + 1;
          e.rec_replayed = 0;
        }
      }
      if (e.in_rec && ns == TxState::normal) {
        e.in_rec = false;
        if (on_recovery_) on_recovery_({L.index, x, e.rec_start, t + 1, e.rec_replayed});
      }
      e.state = ns;
      // steady: consecutive fresh data frames of one kind (valid / idle)
      const bool v = f.kind == FrameKind::data_valid;
      if (fresh && (f.kind == FrameKind::data_valid || f.kind == FrameKind::data_idle) && v == e.steady_valid)
        ++e.steady;
      else {
        e.steady = fresh && (f.kind == FrameKind::data_valid || f.kind == FrameKind::data_idle) ? 1 : 0;
        e.steady_valid = v;
      }
      if (on_frame_) on_frame_({L.index, x, t, f.kind, f.counter, f.seg, f.replay, s});
    }
    // --- channel: real flipped bits, the CRC decides
    for (int x = 0; x < 2; ++x) {
      bool hit = false;
      if (scripted) {
        if (script_now) {
          flips_ = script_.flips(L.index, x, t, out[x].kind);
          hit = !flips_.empty();
          if (script_.skip_ahead) L.hit_at[x] = script_next;
        }
      } else if (L.hit_at[x] == t) {
        L.err[x]->take(t, flips_);
        L.hit_at[x] = L.err[x]->next_hit_slot();
        hit = !flips_.empty();
      }
      if (hit) {
        WireFrame& f = out[x];
        const std::uint64_t seed = cfg_.seed, lane = L.index, cnt = f.counter;
        const RxView v =
            codec_.hit(f.kind, f.counter, [&] { return link::key_hash(seed, lane, x, cnt, 5); }, flips_);
        f.hit = true;
        f.rx_header = v.header;
        f.rx_kind = v.kind;
        f.bits_changed = v.bits_changed;
        f.rx_check = v.check;
        ++st_[x].hit_frames;
        st_[x].bit_errors += flips_.size();
        L.hit_run[x] = L.last_hit[x] + 1 == t ? L.hit_run[x] + 1 : 1;
        L.last_hit[x] = t;
        if (L.hit_run[x] >= hit_run_limit_ && status_ == Status::running && busy()) {
          status_ = Status::no_progress;
          why_ = "lane " + std::to_string(L.index) + (x ? " B->A" : " A->B") + ": the last " +
                 std::to_string(L.hit_run[x]) +
                 " frames were all corrupted; a recovery needs 8 consecutive intact retransmit requests and an "
                 "intact replayed frame";
        }
        L.e[x].steady = 0;  // a hit breaks the sender's steady run (the frame in flight is not clean)
      }
    }
    // --- receivers: the frame sent D slots ago by the far end
    for (int x = 0; x < 2; ++x) {
      auto& e = L.e[x];
      const int din = 1 - x;
      auto& S = st_[din];
      const WireFrame& f = L.pipe[din][pi];
      RxView v;
      if (f.hit) {
        v.header = f.rx_header;
        v.kind = f.rx_kind;
        v.bits_changed = f.bits_changed;
        v.check = f.rx_check;
      } else {
        v = FrameCodec::clean(f.kind, f.counter);
      }
      const bool legal = v.header == kHeaderData || v.header == kHeaderControl;
      if (!e.rx_up) {
        if (legal) {
          if (++e.sync_good >= cfg_.resync_frames) e.rx_up = true;
        } else {
          e.sync_good = 0;
        }
        continue;
      }
      if (mm_on_ && is_data(f.kind))
        if (const std::uint32_t need = (f.counter ^ e.counter) & 0xFFFu) ++mm_[din][0][need];
      if (!legal) {
        ++S.out_of_sync;
        ++S.detected_errors;
        e.rx_up = false;
        e.sync_good = 0;
        e.fl.reset_counts();
        e.rx_error = true;
        e.counter = e.threshold - kRollback;
        continue;
      }
      const bool is_ctrl = v.header == kHeaderControl && v.check == 0 && !is_data(v.kind);
      const bool hdr_data = v.header == kHeaderData;
      const bool crc_good = hdr_data && v.check == (e.counter & 0xFFF);
      const bool valid_out = crc_good && e.threshold == e.counter;
      e.fl.on_frame(is_ctrl, v.kind, hdr_data, valid_out);
      if (crc_good) {
        if (e.rx_error && e.threshold == e.counter + 1) e.rx_error = false;
        const bool wrong = (f.hit && v.bits_changed) || f.counter != e.counter;
        if (wrong) {
          ++S.undetected_errors;
          if (f.counter != e.counter) ++S.undetected_misordered;
        }
        ++e.counter;
        if (valid_out) {
          ++e.threshold;
          if (f.kind == FrameKind::data_valid) {
            ++e.delivered;
            ++S.delivered_segments;
            delivered_now_[din] = true;
            S.last_delivery_slot = t;
            last_progress_slot_ = t;
            if (on_deliver_) on_deliver_(L.index, din, f.seg, t);
          } else if (f.kind == FrameKind::fc_pause) {
            e.fc_paused = true;
          } else if (f.kind == FrameKind::fc_resume) {
            e.fc_paused = false;
          }
        }
      } else if (!is_ctrl) {
        if (f.hit && v.bits_changed) ++S.detected_errors;
        e.rx_error = true;
        e.counter = e.threshold - kRollback;
      }
    }
    L.pipe[0][pi] = out[0];
    L.pipe[1][pi] = out[1];
    // --- back to a clean run?
    if (skip) {
      bool q = true;
      for (int x = 0; x < 2 && q; ++x) {
        const auto& e = L.e[x];
        q = e.state == TxState::normal && !e.abnormal && e.rx_up && !e.rx_error && e.fl.quiet() &&
            e.counter == e.threshold && e.pending_fc == 0 && e.steady >= L.D + 1 &&
            (!e.steady_valid || e.next_seg < e.total_segs);
      }
      if (q) {
        L.quiescent = true;
        L.q_since = t + 1;
        std::uint64_t nd = kNever;
        for (int x = 0; x < 2; ++x) {
          const auto& e = L.e[x];
          nd = std::min(nd, L.hit_at[x]);
          if (e.comp_period) nd = std::min(nd, (t + 1) / e.comp_period * e.comp_period + e.comp_period - 1);
          if (e.steady_valid) nd = std::min(nd, t + 1 + (e.total_segs - e.next_seg));
        }
        L.next_dist = std::max(nd, t + 1);
      }
    }
    if (skip && !on_frame_ && !L.quiescent && t + 1 >= L.win_retry) {
      open_window(L, t + 1);
      // Back off after failed attempts (at most 8 slots late; a window that
      // opens later is as exact, only shorter).
      if (L.win_end) {
        L.win_backoff = 1;
      } else {
        L.win_retry = t + 1 + L.win_backoff;
        L.win_backoff = std::min<std::uint32_t>(2 * L.win_backoff, 8);
      }
    }
  }
}

// The control frame end `e` sends in every slot of a control window, or
// data_valid if its transmitter is not in such a state: Send Retrans
// (retransmit requests), Pause (idle), Retrans in its idle part 2B <= rc < 3B
// (idle, or retransmit requests while its receiver has an error).
template <class End>
static FrameKind window_kind(const End& e, std::uint32_t B) {
  switch (e.state) {
    case TxState::send_retrans: return FrameKind::ctrl_retrans;
    case TxState::pause: return FrameKind::ctrl_idle;
    case TxState::retrans:
      if (e.rc >= 2 * B && e.rc < 3 * B) return e.rx_error ? FrameKind::ctrl_retrans : FrameKind::ctrl_idle;
      return FrameKind::data_valid;
    default: return FrameKind::data_valid;
  }
}

namespace {
// The receiver's event flags as one index (pause run 0..8, retransmit run
// 0..8, data-or-idle run 0..16, the two flags) and their transition table
// for a clean frame that delivers nothing, by class: data (any data kind:
// failed CRC or not delivered), control idle, pause, retransmit request.
constexpr std::uint32_t kFlagStates = 9 * 9 * 17 * 4;
inline std::uint16_t pack(const RxEventFlags& f) {
  return static_cast<std::uint16_t>((f.remote_retrans ? 1u : 0u) + (f.remote_pause ? 2u : 0u) +
                                    4u * (f.doi_cnt + 17u * (f.retrans_cnt + 9u * f.pause_cnt)));
}
inline RxEventFlags unpack(std::uint32_t i) {
  RxEventFlags f;
  f.remote_retrans = (i & 1u) != 0;
  f.remote_pause = (i & 2u) != 0;
  i >>= 2;
  f.doi_cnt = static_cast<std::uint8_t>(i % 17);
  i /= 17;
  f.retrans_cnt = static_cast<std::uint8_t>(i % 9);
  f.pause_cnt = static_cast<std::uint8_t>(i / 9);
  return f;
}
inline std::uint32_t frame_class(FrameKind k) {
  static_assert(static_cast<int>(FrameKind::ctrl_retrans) == 6, "FrameKind order");
  constexpr std::uint8_t cls[7] = {0, 0, 0, 0, 1, 2, 3};
  return cls[static_cast<std::uint8_t>(k)];
}
const std::uint16_t* flag_table() {
  static const std::vector<std::uint16_t> t = [] {
    std::vector<std::uint16_t> v(kFlagStates * 4);
    constexpr FrameKind kinds[4] = {FrameKind::data_valid, FrameKind::ctrl_idle, FrameKind::ctrl_pause,
                                    FrameKind::ctrl_retrans};
    for (std::uint32_t i = 0; i < kFlagStates; ++i)
      for (std::uint32_t c = 0; c < 4; ++c) {
        RxEventFlags f = unpack(i);
        f.on_frame(!is_data(kinds[c]), kinds[c], is_data(kinds[c]), false);
        v[i * 4 + c] = pack(f);
      }
    return v;
  }();
  return t.data();
}
}  // namespace

// Open a window at slot t1 if, from t1 on, lane L repeats itself with period
// 1 or 2 until a bound: each end either sends one control-frame kind in a
// state the transition keeps (window_kind), or is in the replay part of
// Retrans (rc < 2B: a buffered data frame at even rc, a control frame of one
// kind at odd rc). Each receiver first gets the D frames already in flight
// (the far end's frames before t1, any pattern), then the far end's pattern;
// the window holds if those frames change nothing but its event flags and
// the counter of a receiver in error (clean control frames; clean data frames
// that such a receiver rejects, rolling back, or re-accepts in order before
// the frame that would clear its error: rx error stays set, nothing is
// delivered; window_rx_counters), its flags
// settle into period 1 or 2 once the pattern arrives (the flags of every
// slot are kept: win_fl), and its transmitter keeps its state under every
// one of those flag values (or toggles Retrans <-> Send Retrans, retransmit
// requests either way). Bounds: the next hit on either direction, rc reaching
// 2B (replay part) or 3B (idle part), the arrival of the replayed frame that
// would clear the receiver's error (the one before its threshold) or of one
// it would accept out of order (counters equal mod 2^12 only).
void RiflLink::open_window(Lane& L, std::uint64_t t1) {
  const std::uint32_t B = d_.buffer;
  const std::uint32_t D = L.D;
  std::uint64_t end = std::min(L.hit_at[0], L.hit_at[1]);
  FrameKind k[2];
  bool rep[2];
  for (int x = 0; x < 2; ++x) {
    const auto& e = L.e[x];
    if (!e.rx_up) return;
    rep[x] = e.state == TxState::retrans && e.rc < 2 * B;
    if (rep[x]) {
      k[x] = e.rx_error ? FrameKind::ctrl_retrans : FrameKind::ctrl_idle;
      end = std::min<std::uint64_t>(end, t1 + (2 * B - e.rc));
    } else {
      k[x] = window_kind(e, B);
      if (k[x] == FrameKind::data_valid) return;
      if (e.state == TxState::retrans) end = std::min<std::uint64_t>(end, t1 + (3 * B - e.rc));
    }
  }
  if (end < t1 + 4) return;  // not worth it
  // Cheap conditions first: the frames in flight are clean and change
  // nothing but flags and an erring receiver's counter (a data frame among
  // them, or a replay-fed receiver, needs a receiver with rx error set: it
  // re-accepts the frames it had before the error, in order, and rolls back
  // on any other); the arrival of the frame that would clear its rx error
  // (or of one accepted out of order) bounds the window.
  for (int x = 0; x < 2; ++x) {
    const auto& e = L.e[x];
    const int y = 1 - x;
    const auto& far = L.e[y];
    const auto& pipe = L.pipe[y];
    // An erring receiver: rx error set, counter between the rollback point
    // and the frame before the threshold (kRollback <= 2^12: counters mod
    // 2^12 stay distinct over that range).
    const bool erring = e.rx_error && e.counter + kRollback >= e.threshold && e.counter < e.threshold;
    const std::uint64_t rolled_back = e.threshold - kRollback, last = e.threshold - 1;
    std::uint64_t c = e.counter;  // the receiver's counter as the frames in flight arrive
    // The first frame in flight that is hit, or a data frame that a receiver
    // not in error takes, or one that would clear its error or is accepted
    // out of order, ends the window at its arrival (it is stepped).
    for (std::uint32_t i = 0, p = L.pos; i < D && t1 + i < end; ++i, p = p + 1 == D ? 0 : p + 1) {
      const auto& f = pipe[p];
      if (f.hit || (is_data(f.kind) && !erring)) {
        end = t1 + i;
        break;
      }
      if (!is_data(f.kind)) continue;
      if (((f.counter ^ c) & 0xFFFu) == 0) {
        if (f.counter != c || c == last) {
          end = t1 + i;
          break;
        }
        ++c;  // accepted again, in order
      } else {
        c = rolled_back;  // failed the CRC: rolled back
      }
    }
    if (end < t1 + 4) return;
    if (!rep[y]) continue;
    if (B > 4096 || !erring) {
      // the arrival of the far end's first replayed frame ends it
      end = std::min<std::uint64_t>(end, t1 + (far.rc & 1u) + D);
      if (end < t1 + 4) return;
      continue;
    }
    // The far end's replay: buffered frames of consecutive counters from
    // its head on (the k-th arrives in window slot D + (rc & 1) + 2k). The
    // first one that does not match the counter rolls the receiver back;
    // from the first one matching it on, it accepts them in order until the
    // frame before the threshold, whose arrival ends the window (as does a
    // frame matching only mod 2^12, or one past the run of consecutive
    // counters: the window's rc bound comes first).
    const std::uint64_t base = far.buf[far.head].counter;
    std::uint64_t ka = 0, ca = c;  // first accepted frame and its counter
    if (base != c) {
      if (((base ^ c) & 0xFFFu) == 0) {
        ka = 0;  // accepted out of order
        ca = kNever;
      } else {
        ka = 1 + ((rolled_back - base - 1) & 0xFFFu);
        ca = base + ka == rolled_back ? rolled_back : kNever;
      }
    }
    std::uint64_t kend = ka;  // the replayed frame whose arrival ends the window
    if (ca != kNever) {
      kend = ka + (last - ca);
      if (kend >= B || far.buf[(far.head + kend) % B].counter != base + kend) kend = ka;
    }
    end = std::min<std::uint64_t>(end, t1 + D + (far.rc & 1u) + 2 * kend);
    if (end < t1 + 4) return;
  }
  // Each receiver's flags slot by slot (the frames in flight, then the far
  // end's pattern) until they repeat with period 2 (win_T[x] = the first
  // i >= D with fl_i == fl_{i+2}), and its transmitter under each of them:
  // it keeps its state under every flag value, or toggles between Retrans
  // (idle part) and Send Retrans, sending retransmit requests in both (rx
  // error set, remote retransmit dropped: Retrans leaves at rc >= 2B, Send
  // Retrans returns while rc != 0); rc then grows in every other slot. From
  // win_T on the flags have period 2 like the states: slots i <= win_T + 1
  // cover all. Not Normal, so next_tx has no side effect.
  const std::uint16_t* ftab = flag_table();
  bool tog[2];
  for (int x = 0; x < 2; ++x) {
    const auto& e = L.e[x];
    const int y = 1 - x;
    const auto& pipe = L.pipe[y];
    bool ab = false;
    const TxState s0 = e.state;
    const TxState s1 = next_tx(s0, ab, e.rc, B, e.rx_up, e.rx_error, e.fl.remote_pause, e.fl.remote_retrans);
    tog[x] = s1 != s0;
    std::uint32_t rc1 = e.rc;
    if (tog[x]) {
      const bool pair = (s0 == TxState::retrans && s1 == TxState::send_retrans) ||
                        (s0 == TxState::send_retrans && s1 == TxState::retrans);
      if (rep[x] || !pair || !e.rx_error || !e.in_rec || e.rc < 2 * B) return;
      rc1 = e.rc + (s0 == TxState::retrans ? 1 : 0);
      if (rc1 >= 3 * B) return;
      // every Retrans slot has rc < 3B
      end = std::min<std::uint64_t>(end, t1 + 2 * (3 * B - e.rc) - 1);
      if (end < t1 + 4) return;
    }
    // fl[n]: the flags after n window slots, n <= nwin; the transmitter is
    // checked in slots 1 .. nwin - 1 (slot 0 above); its first change ends the window.
    std::uint16_t* fl = L.win_fl[x].data();
    fl[0] = pack(e.fl);
    const std::uint32_t rcy = L.e[y].rc, ky = frame_class(k[y]);
    const std::uint64_t cap = D + Lane::kTrajSlack - 1;
    std::uint64_t nwin = std::min<std::uint64_t>(end - t1, cap);
    std::uint64_t T = 0;
    bool periodic = false;
    // ok[parity of the slot] bit (rp * 2 + rr): the transmitter moves as the window has it
    std::uint32_t ok[2] = {0, 0};
    for (std::uint32_t odd = 0; odd < 2; ++odd) {
      const TxState si = tog[x] && odd ? s1 : s0, want = tog[x] && !odd ? s1 : s0;
      for (std::uint32_t b = 0; b < 4; ++b)
        if (next_tx(si, ab, odd ? rc1 : e.rc, B, e.rx_up, e.rx_error, (b & 2u) != 0, (b & 1u) != 0) == want)
          ok[odd] |= 1u << b;
    }
    std::uint32_t p = L.pos;
    for (std::uint32_t j = 1;; ++j) {
      std::uint32_t cls;  // the frame received in slot j - 1
      if (j - 1 < D) {
        cls = frame_class(pipe[p].kind);
        p = p + 1 == D ? 0 : p + 1;
      } else {
        cls = rep[y] && ((rcy + (j - 1 - D)) & 1u) == 0 ? 0 : ky;  // 0: a buffered data frame
      }
      const std::uint16_t f = fl[j] = ftab[fl[j - 1] * 4u + cls];
      if (j >= nwin) break;
      if (((ok[j & 1u] >> (f & 3u)) & 1u) == 0) {
        nwin = j;
        break;
      }
      if (j >= D + 2 && fl[j - 2] == f) {
        T = j - 2;
        periodic = true;
        break;
      }
    }
    if (!periodic) {
      if (nwin < 4) return;
      end = std::min<std::uint64_t>(end, t1 + nwin);
      T = nwin;  // settle_window reads fl[n], n <= nwin
    }
    L.win_T[x] = static_cast<std::uint32_t>(T);
  }
  if (end < t1 + 4) return;
  L.win_since = t1;
  L.win_end = end;
  for (int x = 0; x < 2; ++x) {
    L.win_kind[x] = k[x];
    L.win_rep[x] = rep[x];
    L.win_tog[x] = tog[x];
  }
}

// Apply the slots [win_since, t) of lane L's window and close it.
void RiflLink::settle_window(Lane& L, std::uint64_t t) {
  const std::uint32_t B = d_.buffer;
  const std::uint64_t t0 = L.win_since, n = std::min(t, L.win_end) - t0;
  L.win_end = 0;
  if (n == 0) return;
  std::uint64_t rx_counter[2];
  window_rx_counters(L, t0, n, rx_counter);
  skipped_ += n;
  for (int x = 0; x < 2; ++x) {
    auto& e = L.e[x];
    auto& S = st_[x];
    S.frames += n;
    std::uint64_t ctrl_slots = n;
    if (L.win_rep[x]) {
      // data at even rc: buffered frames from head on
      const std::uint32_t rc0 = e.rc, h0 = e.head;
      const std::uint64_t even0 = (rc0 & 1u) ? 0 : 1;
      const std::uint64_t dc = (n + even0) / 2;
      ctrl_slots = n - dc;
      S.retransmitted_frames += dc;
      e.rec_replayed += dc;
      // the last min(n, D) frames sent are in flight: window slots i =
      // n - m .. n - 1 into pipe places (t0 + i) mod D; the data frame of
      // slot i (rc0 + i even) is buffered frame (i + even0) / 2 from h0 on.
      const std::uint64_t m = std::min<std::uint64_t>(n, L.D), i0 = n - m;
      std::uint32_t p = static_cast<std::uint32_t>((t0 + i0) % L.D);
      std::uint32_t b = static_cast<std::uint32_t>((h0 + (i0 + even0) / 2) % B);
      for (std::uint64_t i = i0; i < n; ++i) {
        WireFrame& f = L.pipe[x][p];
        if (((rc0 + i) & 1u) == 0) {
          f = e.buf[b];
          f.replay = true;
          f.hit = false;
          b = b + 1 == B ? 0 : b + 1;
        } else {
          f = ctrl(L.win_kind[x]);
        }
        p = p + 1 == L.D ? 0 : p + 1;
      }
      e.head = static_cast<std::uint32_t>((h0 + dc) % B);
    } else {
      // the last min(n, D) control frames sent are in flight
      const WireFrame c = ctrl(L.win_kind[x]);
      const std::uint64_t m = std::min<std::uint64_t>(n, L.D);
      for (std::uint32_t p = static_cast<std::uint32_t>((t0 + n - m) % L.D), k = 0; k < m; ++k) {
        L.pipe[x][p] = c;
        p = p + 1 == L.D ? 0 : p + 1;
      }
    }
    if (L.win_kind[x] == FrameKind::ctrl_retrans)
      S.ctrl_retrans += ctrl_slots;
    else
      S.ctrl_idle += ctrl_slots;
    if (L.win_tog[x]) {
      // Retrans slots (rc grows) and Send Retrans slots (each re-enters Retrans)
      const std::uint64_t r = e.state == TxState::retrans ? (n + 1) / 2 : n / 2;
      e.rc += static_cast<std::uint32_t>(r);
      S.recoveries += n - r;
      if (n & 1u) e.state = e.state == TxState::retrans ? TxState::send_retrans : TxState::retrans;
    } else if (e.state == TxState::retrans) {
      e.rc += static_cast<std::uint32_t>(n);
    }
    const std::uint32_t T = L.win_T[x];
    e.fl = unpack(n <= T + 1 ? L.win_fl[x][n] : L.win_fl[x][T + ((n - T) & 1u)]);
    e.counter = rx_counter[x];
  }
}

// The receivers' counters after the slots [t0, t0 + n) of lane L's window,
// before settle_window applies them (rx_counter[x]), and under
// count_mismatched_frames() the frames each receiver got while expecting
// another counter. Receiver x gets the D frames in flight at t0, then the far
// end's pattern (buffered data frames of consecutive counters from the head
// on, at even rc, while it replays). open_window admitted data frames only
// for a receiver in error, which re-accepts a frame matching its counter
// (the counter steps on) and rolls back on any other; a window ends before
// the frame that would clear the error.
void RiflLink::window_rx_counters(const Lane& L, std::uint64_t t0, std::uint64_t n, std::uint64_t rx_counter[2]) {
  const std::uint32_t B = d_.buffer, D = L.D;
  for (int x = 0; x < 2; ++x) {
    const int y = 1 - x;
    const auto& e = L.e[x];
    const auto& far = L.e[y];
    rx_counter[x] = e.counter;
    if (!e.rx_error) continue;  // a receiver not in error gets no data frame in a window
    const std::uint64_t rolled_back = e.threshold - kRollback;
    std::uint64_t c = e.counter;
    const std::uint64_t m = std::min<std::uint64_t>(n, D);
    for (std::uint32_t i = 0, p = static_cast<std::uint32_t>(t0 % D); i < m; ++i) {
      const WireFrame& f = L.pipe[y][p];
      p = p + 1 == D ? 0 : p + 1;
      if (!is_data(f.kind)) continue;
      if (const std::uint32_t need = (f.counter ^ c) & 0xFFFu) {
        if (mm_on_) ++mm_[y][0][need];
        c = rolled_back;
      } else {
        ++c;
      }
    }
    if (L.win_rep[y] && n > D) {
      const std::uint64_t len = n - D, even0 = (far.rc & 1u) ? 0 : 1;
      const std::uint64_t dc = (len + even0) / 2;  // buffered frames received, from the head on
      if (dc > 0) {
        const std::uint32_t h0 = far.head;
        const std::uint64_t base = far.buf[h0].counter;
        // frames base, base + 1, ... against c: accepted while they match
        std::uint64_t k = 0;
        if (base == c) {
          k = dc;  // all accepted (the window ends before the one clearing the error)
          c += dc;
        } else if (dc <= B && far.buf[(h0 + dc - 1) % B].counter == base + dc - 1) {
          if (mm_on_) ++mm_[y][0][(base ^ c) & 0xFFFu];
          c = rolled_back;
          k = 1;
          // rejected against the rolled-back counter up to the first frame matching it
          const std::uint64_t ka = 1 + ((rolled_back - base - 1) & 0xFFFu);
          const std::uint64_t rej = std::min(dc, ka) - 1;
          if (mm_on_ && rej) count_counter_run(y, base + 1, rej, rolled_back);
          k += rej;
          if (dc > ka) c += dc - ka;  // accepted from frame ka on (it matches exactly: open_window)
        } else {
          for (; k < dc; ++k) {
            const std::uint64_t fc = far.buf[(h0 + k) % B].counter;
            if (const std::uint32_t need = (fc ^ c) & 0xFFFu) {
              if (mm_on_) ++mm_[y][0][need];
              c = rolled_back;
            } else {
              ++c;
            }
          }
        }
      }
    }
    rx_counter[x] = c;
  }
}

// Counters first .. first + n - 1 against `expected`: the needed syndromes
// (c ^ expected) & 0xFFF of an aligned block of 2^k low-12-bit values form
// the aligned block of 2^k syndromes (its index XOR expected >> k).
void RiflLink::count_counter_run(int dir, std::uint64_t first, std::uint64_t n, std::uint64_t expected) {
  auto& H = mm_[dir];
  const std::uint32_t e = static_cast<std::uint32_t>(expected & 0xFFFu);
  H[12][0] += n / 4096;  // whole cycles: every syndrome once
  n %= 4096;
  auto seg = [&](std::uint32_t a, std::uint32_t b) {  // [a, b) within 0..4096
    while (a < b) {
      std::uint32_t k = a ? static_cast<std::uint32_t>(__builtin_ctz(a)) : 12u;
      while ((1u << k) > b - a) --k;
      ++H[k][(a ^ e) >> k];
      a += 1u << k;
    }
  };
  const std::uint32_t lo = static_cast<std::uint32_t>(first & 0xFFFu);
  if (lo + n <= 4096) {
    seg(lo, static_cast<std::uint32_t>(lo + n));
  } else {
    seg(lo, 4096);
    seg(0, static_cast<std::uint32_t>(lo + n - 4096));
  }
}

void RiflLink::count_mismatched_frames() {
  mm_on_ = true;
  for (auto& d : mm_)
    for (std::uint32_t k = 0; k < 13; ++k) d[k].assign(4096u >> k, 0);
}

std::vector<std::uint64_t> RiflLink::mismatched_frames(int dir) const {
  if (!mm_on_) return {};
  std::vector<std::uint64_t> h(4096, 0);
  for (std::uint32_t s = 1; s < 4096; ++s)
    for (std::uint32_t k = 0; k < 13; ++k) h[s] += mm_[dir][k][s >> k];
  return h;
}

// Complete, at slot t, every packet whose last segment is below the frontier.
void RiflLink::complete_packets(int dir, std::uint64_t t0, std::uint64_t n) {
  auto& D = *dir_[dir];
  const std::uint32_t N = cfg_.lanes;
  std::uint64_t F = kNever;
  for (std::uint32_t l = 0; l < N; ++l) {
    const auto& r = lanes_[l]->e[1 - dir];
    const auto& s = lanes_[l]->e[dir];
    const std::uint64_t j = r.delivered;
    if (j >= s.total_segs) continue;
    F = std::min(F, j * N + l);
  }
  if (F == kNever) F = D.K;
  // Delivery slot of lane-l segment j in this window: linear when n > 1
  // (every lane streaming, one segment per slot), t0 when n == 1.
  while (D.next_pkt < D.last_seg.size() && D.last_seg[D.next_pkt] < F) {
    const std::uint64_t E = D.last_seg[D.next_pkt];
    const std::uint64_t S = D.next_pkt ? D.last_seg[D.next_pkt - 1] + 1 : 0;
    std::uint64_t done = t0;
    if (n > 1) {
      done = 0;
      for (std::uint32_t l = 0; l < N && l <= E; ++l) {
        const std::uint64_t jl = (E - l) / N;
        const std::uint64_t j_before = jb_[dir][l];
        const std::uint64_t slot = jl >= j_before ? t0 + (jl - j_before) : (t0 ? t0 - 1 : 0);
        done = std::max(done, slot);
      }
    }
    // packet in: the serialization slot of its first segment
    auto& runs = lanes_[S % N]->e[dir].runs;
    const std::uint64_t j = S / N;
    while (!runs.empty() && runs.front().j0 + runs.front().len <= j) runs.pop_front();
    const std::uint64_t in = runs.empty() ? done : runs.front().slot0 + (j - runs.front().j0);
    lat_.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(done + 1 - in, 0xFFFFFFFFULL)));
    if (record_done_) lat_done_.push_back(done);
    if (cfg_.external) done_.push_back({dir, done});
    ++D.next_pkt;
  }
  D.F = F;
}

// Only the directions with a delivery in this slot: the others' frontier
// and occupancies did not move since they were last checked (a skip stops
// before any slot whose deliveries would change a check).
void RiflLink::check_flow_control() {
  const std::uint32_t N = cfg_.lanes;
  for (int dir = 0; dir < 2; ++dir) {
    if (!delivered_now_[dir]) continue;
    const std::uint64_t F = dir_[dir]->F;
    // lane l's segments below the frontier F = qN + r: q, plus one if l < r
    const std::uint64_t q = F / N, rem = F % N;
    for (std::uint32_t l = 0; l < N; ++l) {
      auto& r = lanes_[l]->e[1 - dir];  // receiver of this direction; its TX carries the FC frames
      const std::uint64_t below = q + (l < rem ? 1 : 0);
      const std::uint64_t occ = r.delivered > below ? r.delivered - below : 0;
      if (occ > d_.fc_buffer && status_ == Status::running) {
        status_ = Status::overflow;
        why_ = "lane " + std::to_string(l) + (dir ? " B->A" : " A->B") + ": reorder buffer holds " +
               std::to_string(occ) + " frames > fc_buffer " + std::to_string(d_.fc_buffer);
      }
      if (!r.fc_asserted && occ >= d_.fc_on) {
        r.fc_asserted = true;
        r.pending_fc = r.pending_fc == 2 ? 0 : 1;
        if (lanes_[l]->quiescent) lanes_[l]->next_dist = now_ + 1;
      } else if (r.fc_asserted && occ <= d_.fc_off) {
        r.fc_asserted = false;
        r.pending_fc = r.pending_fc == 1 ? 0 : 2;
        if (lanes_[l]->quiescent) lanes_[l]->next_dist = now_ + 1;
      }
    }
  }
}

// One iteration of the main loop: a clean run skipped arithmetically up to
// at most `stop` (returns true), or one slot stepped (returns false).
bool RiflLink::iterate(std::uint64_t stop) {
  // Every lane is in a clean run (until next_dist) or inside a window (until
  // win_end, applied lazily): nothing to step before the earliest of them.
  std::uint64_t nd = kNever;
  bool windowed = false;
  for (auto& L : lanes_) {
    if (L->quiescent) {
      nd = std::min(nd, L->next_dist);
    } else if (L->win_end && now_ < L->win_end) {
      nd = std::min(nd, L->win_end);
      windowed = true;
    } else {
      nd = now_;
      break;
    }
  }
  if (nd > now_ + 1) {
    std::uint64_t target = std::min(nd, stop);
    // A lane inside a window delivers nothing: if no lane streams, stop where
    // the stepped path's watchdog would look (the slot that ends the stall
    // limit is stepped, so the diagnosis comes at the same slot).
    if (windowed && stall_limit_) {
      bool streams = false;
      for (const auto& L : lanes_) streams = streams || (L->quiescent && (L->e[0].steady_valid || L->e[1].steady_valid));
      if (!streams) target = std::min(target, std::max(last_progress_slot_ + stall_limit_, now_ + 1));
    }
    // External traffic: stop at the end of the slot of the next completion,
    // so the caller sees every delivery at its own time.
    if (cfg_.external) target = std::min(target, next_completion_in_run());
    // Flow control: stop before the slot whose deliveries move an occupancy
    // across a threshold (that slot is stepped and checks as usual).
    if (target > now_ + 1) target = std::min(target, now_ + fc_event_in_run(target - now_) - 1);
    if (target > now_ + 1) {
      // Skip [now_, target): every lane in a clean run streams (or sends
      // idle data), a lane inside a window is left to settle_window().
      const std::uint64_t n = target - now_;
      for (int d = 0; d < 2; ++d) {
        jb_[d].resize(lanes_.size());
        for (std::size_t l = 0; l < lanes_.size(); ++l) jb_[d][l] = lanes_[l]->e[1 - d].delivered;
      }
      for (auto& L : lanes_) {
        L->pos = static_cast<std::uint32_t>((L->pos + n) % L->D);
        if (!L->quiescent) continue;
        skipped_ += n;
        for (int x = 0; x < 2; ++x) {
          auto& s = L->e[x];
          auto& r = L->e[1 - x];
          s.tx_counter += n;
          r.counter += n;
          r.threshold += n;
          st_[x].frames += n;
          if (s.steady_valid) {
            s.next_seg += n;
            s.runs.back().len += n;
            st_[x].fresh_data += n;
            r.delivered += n;
            st_[x].delivered_segments += n;
            st_[x].last_delivery_slot = target - 1;
            last_progress_slot_ = target - 1;
          } else {
            st_[x].idle_data += n;
          }
        }
      }
      if (!windowed) {
        for (int d = 0; d < 2; ++d) complete_packets(d, now_, n);
      } else {
        // The stepped path completes slot by slot, A->B before B->A in a
        // slot: keep that order of the latencies (their mean is summed in
        // it), merging the two directions' completions by slot.
        const std::size_t i0 = lat_.size();
        lat_done_.clear();
        record_done_ = true;
        complete_packets(0, now_, n);
        const std::size_t i1 = lat_.size();
        complete_packets(1, now_, n);
        record_done_ = false;
        if (i1 > i0 && lat_.size() > i1) {
          std::vector<std::uint32_t> m;
          m.reserve(lat_.size() - i0);
          std::size_t a = i0, b = i1;
          while (a < i1 || b < lat_.size())
            if (b == lat_.size() || (a < i1 && lat_done_[a - i0] <= lat_done_[b - i0]))
              m.push_back(lat_[a++]);
            else
              m.push_back(lat_[b++]);
          std::copy(m.begin(), m.end(), lat_.begin() + static_cast<std::ptrdiff_t>(i0));
        }
      }
      now_ = target;
      return true;
    }
  }
  delivered_now_[0] = delivered_now_[1] = false;
  step_slot();
  for (int d = 0; d < 2; ++d)
    if (delivered_now_[d]) complete_packets(d, now_, 1);
  // Occupancies change only when something is delivered.
  if (delivered_now_[0] || delivered_now_[1]) check_flow_control();
  ++now_;
  return false;
}

// Lane l's sender of direction dir delivers one segment per slot of a skip:
// in a clean run and streaming valid data (a lane inside a window delivers
// nothing).
bool RiflLink::streaming(std::uint32_t l, int dir) const {
  return lanes_[l]->quiescent && lanes_[l]->e[dir].steady_valid;
}

// Would check_flow_control() change anything (a threshold crossed, an
// overflow) after k slots of the clean run from now_? Lane l of direction d
// then has delivered r.delivered + k segments if its sender streams valid
// data, r.delivered otherwise; the frontier of a direction with no streaming
// lane is not recomputed (complete_packets() runs only on a delivery).
bool RiflLink::fc_change_after(std::uint64_t k) const {
  const std::uint32_t N = cfg_.lanes;
  for (int dir = 0; dir < 2; ++dir) {
    std::uint64_t F = dir_[dir]->F;
    bool streams = false;
    for (std::uint32_t l = 0; l < N; ++l) streams = streams || streaming(l, dir);
    if (streams) {
      F = kNever;
      for (std::uint32_t l = 0; l < N; ++l) {
        const auto& s = lanes_[l]->e[dir];
        const std::uint64_t j = lanes_[l]->e[1 - dir].delivered + (streaming(l, dir) ? k : 0);
        if (j < s.total_segs) F = std::min(F, j * N + l);
      }
      if (F == kNever) F = dir_[dir]->K;
    }
    const std::uint64_t q = F / N, rem = F % N;
    for (std::uint32_t l = 0; l < N; ++l) {
      const auto& r = lanes_[l]->e[1 - dir];
      const std::uint64_t j = r.delivered + (streaming(l, dir) ? k : 0);
      const std::uint64_t below = q + (l < rem ? 1 : 0);  // as in check_flow_control()
      const std::uint64_t occ = j > below ? j - below : 0;
      if (occ > d_.fc_buffer || (!r.fc_asserted && occ >= d_.fc_on) || (r.fc_asserted && occ <= d_.fc_off))
        return true;
    }
  }
  return false;
}

// The first k in [1, n] at which the deliveries of the k-th slot of a clean
// run from now_ make check_flow_control() change something, or n + 1. In a
// clean run every occupancy is monotone in k (a streaming lane's cannot fall:
// the frontier gains at most N, one segment of each lane, per slot; an idle
// lane's cannot rise), so once the predicate is false at k = 1 each of its
// terms that could turn false stays false, and the rest can only turn true:
// false up to the first such k and true from it on, found by bisection.
// Without a streaming lane nothing is delivered and nothing is checked.
std::uint64_t RiflLink::fc_event_in_run(std::uint64_t n) const {
  bool streams = false;
  for (std::uint32_t l = 0; l < cfg_.lanes; ++l) streams = streams || streaming(l, 0) || streaming(l, 1);
  if (!streams) return n + 1;
  if (fc_change_after(1)) return 1;
  if (n <= 1 || !fc_change_after(n)) return n + 1;
  std::uint64_t lo = 1, hi = n;  // pred(lo) false, pred(hi) true
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (fc_change_after(mid) ? hi : lo) = mid;
  }
  return hi;
}

// Inside a clean run every lane whose sender streams valid data delivers one
// segment per slot: the slot after the one in which the next packet of
// either direction completes (a lower bound where a lane is idle).
std::uint64_t RiflLink::next_completion_in_run() const {
  const std::uint32_t N = cfg_.lanes;
  std::uint64_t best = kNever;
  for (int d = 0; d < 2; ++d) {
    const auto& D = *dir_[d];
    if (D.next_pkt >= D.last_seg.size()) continue;
    const std::uint64_t E = D.last_seg[D.next_pkt];
    std::uint64_t done = now_;
    for (std::uint32_t l = 0; l < N && l <= E; ++l) {
      const std::uint64_t jl = (E - l) / N, have = lanes_[l]->e[1 - d].delivered;
      if (jl >= have) done = std::max(done, now_ + (jl - have));
    }
    best = std::min(best, done + 1);
  }
  return best;
}

std::uint64_t RiflLink::hopeless_hit_run(std::uint64_t limit_slots) const {
  const double S = std::max<double>(static_cast<double>(limit_slots), 1e6);
  const double lnp = std::log(1e-9 / (2.0 * cfg_.lanes * S));  // < 0
  const double q_min = std::pow(1e-6 / S, 1.0 / 9.0);
  double m = lnp / std::log1p(-q_min);
  if (cfg_.channel == RiflConfig::Channel::gilbert_elliott && cfg_.ge.b > 0 && cfg_.ge.b < 1) {
    // a chain step of the flit chain covers a codeword's worth of frames
    const double frames_per_step =
        cfg_.ge_step == RiflConfig::GeStep::flit
            ? std::ceil(static_cast<double>(cfg_.fec_on ? d_.fec_codeword_bits : cfg_.fec_codeword_data_bits) /
                        cfg_.frame_bits)
            : 1.0;
    m = std::max(m, frames_per_step * lnp / std::log1p(-cfg_.ge.b));
  }
  const double watchdog = 64.0 * (3.0 * d_.buffer + 2.0 * d_.delay_slots) + 100000.0;
  return static_cast<std::uint64_t>(std::ceil(std::min(m, watchdog)));
}

RiflLink::Status RiflLink::run(const std::function<void(double)>& progress) {
  if (cfg_.external) throw std::logic_error("RiflLink::run: external traffic is driven by advance()");
  const std::uint32_t B = d_.buffer;
  const std::uint64_t stall_limit = 64ULL * (3 * B + 2 * d_.delay_slots) + 100000;
  std::uint64_t total_segs = dir_[0]->K + dir_[1]->K;
  const std::uint64_t ideal = (std::max(dir_[0]->K, dir_[1]->K) + cfg_.lanes - 1) / cfg_.lanes;
  const std::uint64_t deadline = cfg_.deadline_slots ? cfg_.deadline_slots : 100 * ideal + 10'000'000;
  hit_run_limit_ = hopeless_hit_run(deadline);
  stall_limit_ = stall_limit;
  std::uint64_t next_report = 1ULL << 24, next_check = 1ULL << 20;
  while (status_ == Status::running) {
    if (all_done()) {
      status_ = Status::done;
      break;
    }
    if (iterate(std::min(deadline, std::max(next_check, now_ + 1)))) continue;
    if (now_ - last_progress_slot_ > stall_limit && status_ == Status::running) {
      status_ = Status::no_progress;
      why_ = "no packet segment delivered for " + std::to_string(now_ - last_progress_slot_) + " slots";
    }
    if (now_ >= deadline && status_ == Status::running) {
      status_ = Status::deadline;
      why_ = "simulated time limit of " + std::to_string(deadline) + " slots reached";
    }
    if (now_ >= next_check) {
      next_check = now_ + (1ULL << 20);
      // Projected end beyond the deadline: stop with a diagnosis now.
      const std::uint64_t got = st_[0].delivered_segments + st_[1].delivered_segments;
      if (now_ > (1ULL << 22) && got > 0 &&
          static_cast<double>(now_) * total_segs / got > 4.0 * static_cast<double>(deadline) &&
          status_ == Status::running) {
        status_ = Status::deadline;
        why_ = "at the delivery rate so far the run would need about " +
               std::to_string(static_cast<std::uint64_t>(static_cast<double>(now_) * total_segs / got)) +
               " slots, beyond the limit of " + std::to_string(deadline);
      }
    }
    if (progress && now_ >= next_report) {
      next_report = now_ + (1ULL << 24);
      progress(total_segs ? static_cast<double>(st_[0].delivered_segments + st_[1].delivered_segments) / total_segs
                          : 1.0);
    }
  }
  for (auto& L : lanes_)
    if (L->win_end) settle_window(*L, now_);
  return status_;
}

// --- External traffic --------------------------------------------------------

bool RiflLink::busy() const { return !all_done(); }

void RiflLink::offer_packet(int dir, std::uint64_t bytes) {
  if (!cfg_.external) throw std::logic_error("RiflLink::offer_packet: the link generates its own traffic");
  if (dir < 0 || dir > 1 || bytes == 0) throw std::logic_error("RiflLink::offer_packet: bad direction or size");
  auto& D = *dir_[dir];
  if (!busy()) last_progress_slot_ = now_;  // the watchdog counts from here
  const std::uint64_t segs = (bytes + d_.payload_bytes - 1) / d_.payload_bytes;
  D.K += segs;
  D.last_seg.push_back(D.K - 1);
  st_[dir].packets += 1;
  st_[dir].payload_bytes += bytes;
  st_[dir].segments += segs;
  const std::uint32_t N = cfg_.lanes;
  for (std::uint32_t l = 0; l < N; ++l) {
    Lane& L = *lanes_[l];
    auto& e = L.e[dir];
    const std::uint64_t total = D.K > l ? (D.K - l + N - 1) / N : 0;
    if (total == e.total_segs) continue;
    e.total_segs = total;
    // An idle lane in a clean run starts sending data in this slot.
    if (L.quiescent && !e.steady_valid) L.next_dist = std::min(L.next_dist, now_);
  }
}

void RiflLink::settle() {
  for (auto& L : lanes_)
    if (L->win_end) settle_window(*L, now_);
}

void RiflLink::close_open_recoveries() {
  settle();
  if (!on_recovery_) return;
  for (auto& L : lanes_)
    for (int x = 0; x < 2; ++x)
      if (L->e[x].in_rec) on_recovery_({L->index, x, L->e[x].rec_start, now_, L->e[x].rec_replayed, true});
}

RiflLink::Status RiflLink::advance(std::uint64_t until) {
  if (!cfg_.external) throw std::logic_error("RiflLink::advance: only with external traffic");
  if (!stall_limit_) {
    stall_limit_ = 64ULL * (3 * d_.buffer + 2 * d_.delay_slots) + 100000;
    hit_run_limit_ = hopeless_hit_run(1ULL << 40);  // no deadline: a generous limit
  }
  done_.clear();
  while (status_ == Status::running && now_ < until && done_.empty()) {
    iterate(until);
    if (busy() && now_ - last_progress_slot_ > stall_limit_ && status_ == Status::running) {
      status_ = Status::no_progress;
      why_ = "no packet segment delivered for " + std::to_string(now_ - last_progress_slot_) + " slots";
    }
  }
  return status_;
}

std::string RiflLink::diagnosis() const {
  std::ostringstream o;
  o << "RIFL link: " << to_string(status_);
  if (!why_.empty()) o << " (" << why_ << ")";
  o << " at slot " << now_ << " (" << now_ * d_.slot_ns / 1e3 << " us)";
  for (int d = 0; d < 2; ++d)
    o << "; " << (d ? "B->A" : "A->B") << " delivered " << st_[d].delivered_segments << "/" << dir_[d]->K
      << " segments, " << st_[d].recoveries << " recoveries";
  for (const auto& L : lanes_)
    for (int x = 0; x < 2; ++x) {
      const auto& e = L->e[x];
      o << "; lane " << L->index << (x ? " B" : " A") << ": " << to_string(e.state) << (e.rx_up ? "" : ", rx down")
        << (e.rx_error ? ", rx error" : "") << (e.fl.remote_retrans ? ", remote retrans" : "")
        << (e.fl.remote_pause ? ", remote pause" : "") << (e.fc_paused ? ", flow-control paused" : "") << ", rc "
        << e.rc << ", rx expects frame " << e.threshold << " (counter " << e.counter << "), next tx frame "
        << e.tx_counter << ", replay starts at frame " << e.buf[e.head].counter;
    }
  // The livelock of docs/models/rifl.md: a receiver waits for a frame its far
  // end's retransmit buffer no longer holds, so no replay can bring it.
  for (const auto& L : lanes_)
    for (int x = 0; x < 2; ++x) {
      const auto& e = L->e[x];
      const auto& far = L->e[1 - x];
      const std::uint64_t oldest = far.tx_counter > d_.buffer ? far.tx_counter - d_.buffer : 0;
      if (e.rx_error && e.counter < oldest) {
        o << ". Livelock: lane " << L->index << (x ? " B" : " A") << " waits for frame " << e.counter
          << ", but the far end's retransmit buffer of " << d_.buffer << " frames holds frames " << oldest
          << " on: no replay can bring it (a retransmit request arrived after that frame had left the buffer); "
             "a larger rifl.retransmit_buffer avoids it (docs/models/rifl.md)";
        return o.str();
      }
    }
  return o.str();
}

}  // namespace fabricsim::rifl
