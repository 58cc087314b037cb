#pragma once
// Error streams of one lane direction, indexed by frame slot (rifl.md
// "Evaluation setup": independent bit errors; link-layer.md §2: the
// Gilbert-Elliott burst channel, reused here with one chain step per frame).
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "models/link/core/bit_errors.h"
#include "models/link/core/fec_profile.h"
#include "models/link/core/ge_channel.h"
#include "models/link/core/types.h"

namespace fabricsim::rifl {

/// Source of bit errors on the frames of one lane direction. Frame slot t
/// covers wire bits [t F, (t+1) F), F = frame bits.
class ErrorSource {
 public:
  virtual ~ErrorSource() = default;
  /// Slot of the next frame with at least one error (link::kNever if none).
  virtual std::uint64_t next_hit_slot() = 0;
  /// Bit positions (0..F-1, ascending) flipped in the frame at `slot`, which
  /// must equal next_hit_slot(); advances past that frame.
  virtual void take(std::uint64_t slot, std::vector<std::uint16_t>& positions) = 0;
};

/// Independent bit errors at `ber` drawn by skip-ahead (link::BitErrorStream,
/// the stream the UALink link's independent channel consumes too): frame
/// slot t covers wire bits [t F, (t+1) F), so a clean frame costs nothing and
/// a BER of 1e-12 costs one draw per error. The stream depends on nothing but
/// (seed, stream id, ber).
class IndependentBitErrors : public ErrorSource {
 public:
  /// ber in [0, 0.5] (checked by the config layer).
  IndependentBitErrors(double ber, std::uint32_t frame_bits, std::uint64_t seed, std::uint64_t stream_id);
  std::uint64_t next_hit_slot() override { return s_.next() == link::kNever ? link::kNever : s_.next() / bits_; }
  void take(std::uint64_t slot, std::vector<std::uint16_t>& positions) override;
  std::uint64_t bit_errors() const { return s_.consumed(); }

 private:
  link::BitErrorStream s_;
  std::uint32_t bits_;
};

/// The platform's Gilbert-Elliott channel (models/link/core/ge_channel.h)
/// mapped onto frames: chain step = frame slot; a corrupted step of magnitude
/// m flips m distinct bits at positions drawn uniformly from the frame.
/// Costs one chain step per frame slot (no skip-ahead): for short runs.
class GilbertElliottFrames : public ErrorSource {
 public:
  GilbertElliottFrames(const link::GeParams& p, std::uint32_t frame_bits, std::uint64_t seed, std::uint64_t stream_id);
  std::uint64_t next_hit_slot() override;
  void take(std::uint64_t slot, std::vector<std::uint16_t>& positions) override;
  const link::GilbertElliott& chain() const { return ge_; }

 private:
  link::GilbertElliott ge_;
  std::uint32_t bits_;
  std::uint64_t seed_, stream_;
  std::uint64_t cursor_ = 0;  // first slot not yet examined
  std::uint64_t hit_ = link::kNever;
  std::uint32_t magnitude_ = 0;
};

/// Error bits on the wire of one lane direction, ascending wire bit index.
class WireErrors {
 public:
  virtual ~WireErrors() = default;
  /// Wire bit of the next error not yet consumed (link::kNever if none).
  virtual std::uint64_t next() = 0;
  /// Consume it.
  virtual void pop() = 0;
};

/// Independent bit errors on the wire (link::BitErrorStream, the UALink
/// link's stream too).
class IndependentWire : public WireErrors {
 public:
  IndependentWire(double ber, std::uint64_t seed, std::uint64_t stream_id) : s_(ber, seed, stream_id) {}
  std::uint64_t next() override { return s_.next(); }
  void pop() override { s_.pop(); }

 private:
  link::BitErrorStream s_;
};

/// The Gilbert-Elliott channel on the wire: chain step i covers wire bits
/// [i S, (i+1) S) (S = `step_bits`, e.g. 5120: one 640-B flit of payload, as
/// the UALink link's per-flit chain steps once per flit). Step i is in the
/// state link::GilbertElliott(seed, stream id) gives it, and a corrupted step
/// (attempt 0's corruption and magnitude m, the draw the UALink link's first
/// transmission of flit i makes with the same seed and link id) has m distinct
/// `symbol_bits`-bit symbols in error, one flipped bit each, at positions
/// drawn uniformly over the step.
class GilbertElliottWire : public WireErrors {
 public:
  GilbertElliottWire(const link::GeParams& p, std::uint64_t seed, std::uint64_t stream_id, std::uint64_t step_bits,
                     std::uint32_t symbol_bits);
  std::uint64_t next() override;
  void pop() override { ++pos_; }
  const link::GilbertElliott& chain() const { return ge_; }

 private:
  link::GilbertElliott ge_;
  std::uint64_t seed_, stream_, step_bits_;
  std::uint32_t symbol_bits_;
  std::uint64_t step_ = 0;              // next chain step to examine
  std::vector<std::uint64_t> bits_;     // error bits of the last corrupted step
  std::size_t pos_ = 0;
};

/// Frames of one lane direction over a wire with an optional light FEC
/// below RIFL (docs/models/rifl.md "Light FEC"). The wire carries codewords
/// of K frames followed by P parity bits: frame slot t occupies wire bits
/// [c n + (t - c K) F, + F) with c = t / K, n = K F + P. With FEC, the
/// decoder counts the codeword's symbol errors (distinct `symbol_bits`-bit
/// symbols over all n bits, parity included, holding an error bit): <= t
/// symbols and the whole codeword is corrected (no frame is hit); more, and
/// its frames reach RIFL's CRC with their flipped bits as they are (a failed
/// decode passes the data through; miscorrection is not modelled). Without
/// FEC (correctable < 0, K = 1, P = 0) every error bit hits its frame.
/// A corrected codeword is reported as a hit of its first errored frame with
/// no flipped bit (take() returns an empty list), so that finding the next
/// uncorrectable codeword costs one decode per errored codeword.
class WireFrames : public ErrorSource {
 public:
  WireFrames(std::unique_ptr<WireErrors> wire, std::uint32_t frame_bits, std::uint32_t frames_per_codeword,
             std::uint32_t parity_bits, std::uint32_t symbol_bits, int correctable);
  std::uint64_t next_hit_slot() override;
  void take(std::uint64_t slot, std::vector<std::uint16_t>& positions) override;
  /// Codewords corrected / failed and symbols corrected among those taken so far.
  std::uint64_t codewords_corrected() const { return corrected_; }
  std::uint64_t codewords_failed() const { return failed_; }
  std::uint64_t symbols_corrected() const { return symbols_corrected_; }

 private:
  std::unique_ptr<WireErrors> wire_;
  std::uint32_t F_, K_, P_, sym_;
  int t_;
  std::uint64_t n_;
  struct Hit {
    std::uint64_t slot;
    std::vector<std::uint16_t> pos;
    int fec = 0;                 // 1 = the codeword was corrected, 2 = it failed (counted when taken)
    std::uint32_t symbols = 0;  // symbol errors corrected
  };
  std::deque<Hit> hits_;
  std::vector<std::uint64_t> cw_;  // error bits (offsets) of the codeword being decoded
  std::uint64_t corrected_ = 0, failed_ = 0, symbols_corrected_ = 0;
};

/// Symbol errors of a codeword given its error bits' offsets (ascending):
/// the distinct offset / symbol_bits values.
std::uint32_t codeword_symbol_errors(const std::vector<std::uint64_t>& offsets, std::uint32_t symbol_bits);

}  // namespace fabricsim::rifl
