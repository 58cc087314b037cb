#pragma once
// Independent bit errors on one wire, indexed by wire bit (the error stream
// both link protocols consume: docs/models/link.md "Independent channel",
// docs/models/rifl.md "Error models").
#include <cstdint>

#include "models/link/core/types.h"

namespace fabricsim::link {

/// Independent bit errors at `ber` on the bits of one wire (one link
/// direction, or one lane direction), drawn by skip-ahead: the gap to the
/// next error bit is geometric, G = floor(ln(1 - U) / ln(1 - ber)) clean
/// bits, U from counter-based hashing of (seed, stream id, draw index).
/// Error bit k of the wire is therefore a pure function of (seed, stream id,
/// ber): whoever puts bits on the wire, and however it slices them into
/// flits, frames or codewords, sees the same wire bits flipped. A clean
/// stretch costs nothing; a BER of 1e-12 costs one draw per error.
/// Errors: none (ber in [0, 0.5] is checked by the config layer).
class BitErrorStream {
 public:
  BitErrorStream(double ber, std::uint64_t seed, std::uint64_t stream_id);
  /// Wire bit index of the next error not yet consumed (kNever if none).
  std::uint64_t next() const { return next_bit_; }
  /// Consume the error at next() and draw the one after it.
  void pop() { advance(next_bit_ + 1); }
  /// Error bits consumed so far.
  std::uint64_t consumed() const { return draws_ - (next_bit_ == kNever ? 0 : 1); }
  double ber() const { return ber_; }

 private:
  void advance(std::uint64_t from_bit);
  double ber_, log_q_;
  std::uint64_t seed_, stream_;
  std::uint64_t draws_ = 0;
  std::uint64_t next_bit_ = kNever;
};

/// Raw symbol errors of a transmission occupying wire bits [first_bit,
/// first_bit + bits) on `s`: the number of distinct `symbol_bits`-bit symbols
/// (counted from first_bit) holding at least one error bit; consumes those
/// errors. Precondition: every earlier error has been consumed (wire bits are
/// used in order). The threshold FEC model then decides (link-layer.md §3).
std::uint32_t take_symbol_errors(BitErrorStream& s, std::uint64_t first_bit, std::uint64_t bits,
                                 std::uint32_t symbol_bits);

}  // namespace fabricsim::link
