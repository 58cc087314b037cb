#pragma once
// RIFL frame format with real bits (rifl.md "Frames"): a 4-bit sync/meta
// header, frame_bits - 16 payload bits, a 12-bit CRC over header and payload.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace fabricsim::rifl {

/// What a frame is, as sent. Data frames (valid, idle, and the two
/// flow-control kinds, which ride in invalid data frames so that they go
/// through the retransmit buffer) carry the DATA header and a CRC XORed with
/// the low 12 bits of the transmitter's data-frame counter (the implicit
/// sequence number of the RTL: no sequence field on the wire). Control frames
/// (idle, pause request, retransmit request) carry the CONTROL header, a
/// 16-bit key repeated over the payload, and a plain CRC.
enum class FrameKind : std::uint8_t { data_valid, data_idle, fc_pause, fc_resume, ctrl_idle, ctrl_pause, ctrl_retrans };

constexpr bool is_data(FrameKind k) { return k <= FrameKind::fc_resume; }
const char* to_string(FrameKind k);

constexpr std::uint8_t kHeaderData = 0b0101;     ///< RTL `DATA`
constexpr std::uint8_t kHeaderControl = 0b1010;  ///< RTL `CONTROL`

/// What the receiver's decoder makes of the bits it got.
struct RxView {
  std::uint8_t header = kHeaderData;  ///< the 4 header bits as received
  /// Data frames: CRC(received header + payload) XOR received CRC field. The
  /// frame passes iff this equals the receiver's counter (low 12 bits).
  /// Control frames: passes iff it is 0.
  std::uint16_t check = 0;
  FrameKind kind = FrameKind::data_idle;  ///< payload as parsed (key / reserved pattern)
  bool bits_changed = false;              ///< any bit differs from what was sent
};

/// Builds and parses frames of one width. Supported widths: 128, 256, 512, 1024.
class FrameCodec {
 public:
  /// Errors: std::invalid_argument for an unsupported width.
  explicit FrameCodec(std::uint32_t frame_bits);
  std::uint32_t frame_bits() const { return bits_; }
  std::uint32_t payload_bits() const { return bits_ - 16; }

  /// The frame's bits (bit 0 = first on the wire): header, payload, CRC.
  /// `counter` = the transmitter's data-frame counter (data kinds only);
  /// `content` seeds the pseudo-random payload of a valid data frame.
  std::vector<std::uint64_t> build(FrameKind kind, std::uint64_t counter, std::uint64_t content) const;
  /// Parse received bits; `sent` (what was built) decides bits_changed.
  RxView parse(const std::vector<std::uint64_t>& rx, const std::vector<std::uint64_t>& sent) const;
  /// What parse() makes of the frame build(kind, counter, content()) with the
  /// bits at `flips` (positions 0..F-1) inverted, without building it in the
  /// usual case: the CRC is linear (zero initial register, no final XOR), so
  /// the check is the clean one XOR the error pattern's syndrome (a table of
  /// one syndrome per bit position); the payload kind follows from the error
  /// pattern's payload bits (a reserved pattern or key becomes another only
  /// if every 16-bit chunk is hit). Falls back to build() and parse() when
  /// that is not decided cheaply (e.g. a valid data frame whose first
  /// received chunk equals a reserved pattern). `content` is called only if
  /// the payload of a valid data frame is needed. Same result as
  /// parse(build ^ flips, build) for every input (unit-tested).
  template <class Content>
  RxView hit(FrameKind kind, std::uint64_t counter, Content&& content, const std::vector<std::uint16_t>& flips) const;
  /// The first 16-bit payload chunk of a valid data frame built from `content`.
  static std::uint64_t first_chunk(std::uint64_t content);
  /// View of an uncorrupted frame without building bits (the clean-frame fast path).
  static RxView clean(FrameKind kind, std::uint64_t counter) {
    RxView v;
    v.header = is_data(kind) ? kHeaderData : kHeaderControl;
    v.check = is_data(kind) ? static_cast<std::uint16_t>(counter & 0xFFF) : 0;
    v.kind = kind;
    return v;
  }

 private:
  void put(std::vector<std::uint64_t>& w, std::uint32_t pos, std::uint32_t n, std::uint64_t v) const;
  std::uint64_t get(const std::vector<std::uint64_t>& w, std::uint32_t pos, std::uint32_t n) const;
  /// kind from the received header, the sent payload's kind and the error
  /// pattern's payload (`epay_bits` set bits, first chunk `e0`); returns
  /// false when undecided (then build and parse).
  bool hit_kind(FrameKind sent, std::uint8_t rx_header, std::uint32_t epay_bits, std::uint16_t e0,
                std::uint16_t c0, FrameKind& out) const;
  std::uint32_t bits_;
  std::uint32_t words_;
  std::vector<std::uint16_t> syn_;  ///< syndrome of a single flipped bit at each position
  mutable std::vector<std::uint64_t> e_;  ///< scratch: the error pattern's words
};

template <class Content>
RxView FrameCodec::hit(FrameKind kind, std::uint64_t counter, Content&& content,
                       const std::vector<std::uint16_t>& flips) const {
  RxView v = clean(kind, counter);
  std::fill(e_.begin(), e_.end(), 0);
  for (auto p : flips) {
    e_[p >> 6] ^= 1ULL << (63 - (p & 63));
    v.check ^= syn_[p];
  }
  bool any = false;
  for (auto w : e_) any = any || w != 0;
  v.bits_changed = any;
  v.header ^= static_cast<std::uint8_t>(e_[0] >> 60);
  // the error pattern's payload bits [4, F - 12)
  std::uint32_t epay = 0;
  for (std::uint32_t i = 0; i < words_; ++i) {
    std::uint64_t w = e_[i];
    if (i == 0) w &= ~(0xFULL << 60);
    if (i == words_ - 1) w &= ~0xFFFULL;
    epay += static_cast<std::uint32_t>(__builtin_popcountll(w));
  }
  const std::uint16_t e0 = static_cast<std::uint16_t>((e_[0] >> 44) & 0xFFFF);
  const std::uint16_t c0 = kind == FrameKind::data_valid ? static_cast<std::uint16_t>(first_chunk(content())) : 0;
  if (hit_kind(kind, v.header, epay, e0, c0, v.kind)) return v;
  auto sent = build(kind, counter, kind == FrameKind::data_valid ? content() : 0);
  auto rx = sent;
  for (auto p : flips) rx[p >> 6] ^= 1ULL << (63 - (p & 63));
  return parse(rx, sent);
}

}  // namespace fabricsim::rifl
