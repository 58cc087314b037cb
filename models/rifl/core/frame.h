#pragma once
// RIFL frame format with real bits (rifl.md "Frames"): a 4-bit sync/meta
// header, frame_bits - 16 payload bits, a 12-bit CRC over header and payload.
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
  std::uint32_t bits_;
  std::uint32_t words_;
};

}  // namespace fabricsim::rifl
