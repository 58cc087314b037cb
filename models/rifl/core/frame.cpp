#include "models/rifl/core/frame.h"

#include <algorithm>
#include <stdexcept>

#include "models/link/core/counter_rng.h"
#include "models/rifl/core/crc12.h"

namespace fabricsim::rifl {

namespace {
// 16-bit control keys (RTL: IDLE_KEY, PAUSE_KEY, RETRANS_KEY).
constexpr std::uint64_t kKeyIdle = 0x9D91, kKeyPause = 0xD919, kKeyRetrans = 0x919D;
// Reserved payload patterns of invalid data frames (idle; flow control).
constexpr std::uint64_t kPatIdle = 0x5555555555555555ULL;
constexpr std::uint64_t kPatFcPause = 0xFC00FC00FC00FC00ULL, kPatFcResume = 0xFC01FC01FC01FC01ULL;

// The 16-bit chunk repeated through the payload of a frame without content:
// a control key or a reserved data pattern (0 for data_valid, whose payload
// is pseudo-random content).
std::uint16_t fixed_chunk(FrameKind k) {
  switch (k) {
    case FrameKind::data_idle: return kPatIdle & 0xFFFF;
    case FrameKind::fc_pause: return kPatFcPause & 0xFFFF;
    case FrameKind::fc_resume: return kPatFcResume & 0xFFFF;
    case FrameKind::ctrl_idle: return kKeyIdle;
    case FrameKind::ctrl_pause: return kKeyPause;
    case FrameKind::ctrl_retrans: return kKeyRetrans;
    case FrameKind::data_valid: break;
  }
  return 0;
}
}  // namespace

const char* to_string(FrameKind k) {
  switch (k) {
    case FrameKind::data_valid: return "data";
    case FrameKind::data_idle: return "idle data";
    case FrameKind::fc_pause: return "flow-control pause";
    case FrameKind::fc_resume: return "flow-control resume";
    case FrameKind::ctrl_idle: return "idle";
    case FrameKind::ctrl_pause: return "pause request";
    case FrameKind::ctrl_retrans: return "retransmit request";
  }
  return "?";
}

FrameCodec::FrameCodec(std::uint32_t b) : bits_(b), words_((b + 63) / 64) {
  if (b != 128 && b != 256 && b != 512 && b != 1024)
    throw std::invalid_argument("frame size must be 128, 256, 512 or 1024 bits");
  // Syndrome of a single error at position p: its contribution to
  // crc12(body) ^ crc field (the CRC is linear).
  syn_.resize(b);
  std::vector<std::uint64_t> w(words_, 0);
  for (std::uint32_t p = 0; p < b; ++p) {
    if (p < b - 12) {
      w.assign(words_, 0);
      w[p >> 6] = 1ULL << (63 - (p & 63));
      syn_[p] = crc12(w, b - 12);
    } else {
      syn_[p] = static_cast<std::uint16_t>(1u << (b - 1 - p));
    }
  }
  e_.assign(words_, 0);
}

std::uint64_t FrameCodec::first_chunk(std::uint64_t content) { return link::mix64(content + 0) & 0xFFFF; }

bool FrameCodec::hit_kind(FrameKind sent, std::uint8_t rx_header, std::uint32_t epay_bits, std::uint16_t e0,
                          std::uint16_t c0, FrameKind& out) const {
  // parse(): a control header looks for the three keys, any other for the
  // three reserved data patterns, in this order; none: data_valid.
  const bool ctl = rx_header == kHeaderControl;
  const std::uint16_t cand[3] = {
      static_cast<std::uint16_t>(ctl ? kKeyIdle : kPatIdle & 0xFFFF),
      static_cast<std::uint16_t>(ctl ? kKeyPause : kPatFcPause & 0xFFFF),
      static_cast<std::uint16_t>(ctl ? kKeyRetrans : kPatFcResume & 0xFFFF)};
  const FrameKind ck[3] = {ctl ? FrameKind::ctrl_idle : FrameKind::data_idle,
                           ctl ? FrameKind::ctrl_pause : FrameKind::fc_pause,
                           ctl ? FrameKind::ctrl_retrans : FrameKind::fc_resume};
  const std::uint32_t pl = payload_bits(), chunks = pl / 16;
  if (pl % 16 != 0) return false;
  if (sent == FrameKind::data_valid) {
    // Pseudo-random payload: a reserved pattern needs its first chunk.
    const std::uint16_t r0 = c0 ^ e0;
    for (auto k : cand)
      if (r0 == k) return false;
    out = FrameKind::data_valid;
    return true;
  }
  const std::uint16_t p16 = fixed_chunk(sent);
  // Received chunk i = p16 ^ e_i. Candidate k matches iff e_i = p16 ^ k in
  // every chunk: e = 0 for k = p16, every chunk hit otherwise.
  if (epay_bits >= chunks) return false;
  out = FrameKind::data_valid;
  if (epay_bits == 0)
    for (int i = 0; i < 3; ++i)
      if (cand[i] == p16) {
        out = ck[i];
        break;
      }
  return true;
}

// Bits are MSB first within each word (bit p of the frame = bit 63 - p % 64
// of word p / 64); a field of n <= 64 bits spans at most two words.
void FrameCodec::put(std::vector<std::uint64_t>& w, std::uint32_t pos, std::uint32_t n, std::uint64_t v) const {
  if (n == 0) return;
  if (n < 64) v &= (1ULL << n) - 1;
  const std::uint32_t off = pos & 63, i = pos >> 6;
  const std::uint32_t first = std::min<std::uint32_t>(n, 64 - off);  // bits in word i
  const std::uint32_t rest = n - first;
  // word i: bits [off, off + first) <- the top `first` bits of v
  const std::uint64_t hi = rest ? (v >> rest) : v;
  const std::uint32_t sh = 64 - off - first;
  const std::uint64_t m = (first == 64 ? ~0ULL : ((1ULL << first) - 1)) << sh;
  w[i] = (w[i] & ~m) | ((hi << sh) & m);
  if (rest) {
    const std::uint64_t m2 = ((1ULL << rest) - 1) << (64 - rest);
    w[i + 1] = (w[i + 1] & ~m2) | ((v << (64 - rest)) & m2);
  }
}

std::uint64_t FrameCodec::get(const std::vector<std::uint64_t>& w, std::uint32_t pos, std::uint32_t n) const {
  if (n == 0) return 0;
  const std::uint32_t off = pos & 63, i = pos >> 6;
  const std::uint32_t first = std::min<std::uint32_t>(n, 64 - off);
  const std::uint32_t rest = n - first;
  const std::uint64_t top = (w[i] << off) >> (64 - first);  // `first` bits of word i from off
  if (!rest) return top;
  return (top << rest) | (w[i + 1] >> (64 - rest));
}

std::vector<std::uint64_t> FrameCodec::build(FrameKind kind, std::uint64_t counter, std::uint64_t content) const {
  std::vector<std::uint64_t> w(words_, 0);
  const bool data = is_data(kind);
  put(w, 0, 4, data ? kHeaderData : kHeaderControl);
  const std::uint32_t pl = payload_bits();
  for (std::uint32_t off = 0; off < pl; off += 16) {
    const std::uint32_t n = std::min<std::uint32_t>(16, pl - off);
    const std::uint64_t v = kind == FrameKind::data_valid ? link::mix64(content + off) & 0xFFFF : fixed_chunk(kind);
    put(w, 4 + off, n, v >> (16 - n));
  }
  std::uint16_t crc = crc12(w, bits_ - 12);
  if (data) crc ^= static_cast<std::uint16_t>(counter & 0xFFF);
  put(w, bits_ - 12, 12, crc);
  return w;
}

RxView FrameCodec::parse(const std::vector<std::uint64_t>& rx, const std::vector<std::uint64_t>& sent) const {
  RxView v;
  v.header = static_cast<std::uint8_t>(get(rx, 0, 4));
  v.check = static_cast<std::uint16_t>(crc12(rx, bits_ - 12) ^ get(rx, bits_ - 12, 12));
  v.bits_changed = rx != sent;
  // Payload kind: the reserved patterns and keys, else valid data.
  const std::uint32_t pl = payload_bits();
  auto all16 = [&](std::uint64_t key) {
    for (std::uint32_t off = 0; off < pl; off += 16) {
      const std::uint32_t n = std::min<std::uint32_t>(16, pl - off);
      if (get(rx, 4 + off, n) != ((key & 0xFFFF) >> (16 - n))) return false;
    }
    return true;
  };
  if (v.header == kHeaderControl) {
    v.kind = all16(kKeyIdle)      ? FrameKind::ctrl_idle
             : all16(kKeyPause)   ? FrameKind::ctrl_pause
             : all16(kKeyRetrans) ? FrameKind::ctrl_retrans
                                  : FrameKind::data_valid;  // no key: not a control frame
  } else {
    v.kind = all16(kPatIdle)       ? FrameKind::data_idle
             : all16(kPatFcPause)  ? FrameKind::fc_pause
             : all16(kPatFcResume) ? FrameKind::fc_resume
                                   : FrameKind::data_valid;
  }
  return v;
}

}  // namespace fabricsim::rifl
