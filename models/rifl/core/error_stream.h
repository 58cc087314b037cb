#pragma once
// Error streams of one lane direction, indexed by frame slot (rifl.md
// "Evaluation setup": independent bit errors; link-layer.md §2: the
// Gilbert-Elliott burst channel, reused here with one chain step per frame).
#include <cstdint>
#include <memory>
#include <vector>

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

/// Independent bit errors at `ber` drawn by skip-ahead: the gap to the next
/// error bit is geometric, G = floor(ln(1-U) / ln(1-ber)) clean bits, so a
/// clean frame costs nothing and a BER of 1e-12 costs one draw per error.
/// U comes from counter-based hashing of (seed, stream id, draw index):
/// the stream depends on nothing but its key.
class IndependentBitErrors : public ErrorSource {
 public:
  /// ber in [0, 0.5] (checked by the config layer).
  IndependentBitErrors(double ber, std::uint32_t frame_bits, std::uint64_t seed, std::uint64_t stream_id);
  std::uint64_t next_hit_slot() override { return next_bit_ == link::kNever ? link::kNever : next_bit_ / bits_; }
  void take(std::uint64_t slot, std::vector<std::uint16_t>& positions) override;
  std::uint64_t bit_errors() const { return draws_ - (next_bit_ == link::kNever ? 0 : 1); }

 private:
  void advance(std::uint64_t from_bit);
  double ber_, log_q_;
  std::uint32_t bits_;
  std::uint64_t seed_, stream_;
  std::uint64_t draws_ = 0;
  std::uint64_t next_bit_ = link::kNever;
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

}  // namespace fabricsim::rifl
