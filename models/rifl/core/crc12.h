#pragma once
// CRC-12 verification code of a RIFL frame (rifl.md: "12-bit verification
// code (CRC-12, polynomial 0x02F)") and the probability that it misses an
// error, from the code's weight distribution.
#include <cstdint>
#include <vector>

namespace fabricsim::rifl {

/// Generator g(x) = x^12 + x^5 + x^3 + x^2 + x + 1 (0x02F, the x^12 term
/// implicit). g(1) = 0, so (x + 1) divides g: every odd-weight error is caught.
constexpr std::uint16_t kCrc12Poly = 0x02F;

/// CRC-12 of `nbits` message bits, most significant (first transmitted) bit
/// first: the remainder of m(x) x^12 mod g(x), initial value 0, no reflection,
/// no final XOR. `bits` holds bit i of the message at bits[i / 64] bit
/// (63 - i % 64). Errors: none.
std::uint16_t crc12(const std::vector<std::uint64_t>& bits, std::size_t nbits);

/// The same remainder computed one bit at a time (reference for the bytewise crc12).
std::uint16_t crc12_bitwise(const std::vector<std::uint64_t>& bits, std::size_t nbits);

/// Same over a string of '0'/'1' characters (tests, hand vectors).
std::uint16_t crc12_of_string(const char* bits01);

/// Weight distribution of the error patterns the frame check misses.
///
/// A data frame of `frame_bits` bits = 4 header bits + payload + 12 CRC bits;
/// the CRC covers header and payload. An error is undetected iff it leaves the
/// header legal and unchanged and its syndrome is zero, i.e. it is a nonzero
/// codeword of the shortened cyclic code on the frame_bits - 4 payload + CRC
/// positions. count(w) = number of such codewords of weight w (A_w), computed
/// exactly by dynamic programming over positions and 4096 syndromes (only
/// additions: no cancellation), for w <= max_weight.
class UndetectedErrorModel {
 public:
  /// Errors: std::invalid_argument if frame_bits < 32 or max_weight < 2.
  explicit UndetectedErrorModel(std::uint32_t frame_bits, std::uint32_t max_weight = 40);

  /// A_w for w <= max_weight (A_0 = 1 excluded: returns 0 for w = 0).
  double count(std::uint32_t w) const { return w < a_.size() && w > 0 ? a_[w] : 0.0; }
  /// Smallest w > 0 with A_w > 0 (minimum distance on this length).
  std::uint32_t min_distance() const;

  /// P(a frame hit by independent bit errors at `ber` passes the check):
  /// sum_{w=1..max_weight} A_w ber^w (1-ber)^(n-w), n = frame_bits (the 4 header
  /// bits must stay clean). Truncation: the omitted weights contribute at most
  /// P(Binomial(n, ber) > max_weight), returned by truncation_bound().
  double probability(double ber) const;
  double truncation_bound(double ber) const;
  std::uint32_t frame_bits() const { return n_; }

 private:
  std::uint32_t n_;
  std::vector<double> a_;
};

/// Distribution of the syndrome that independent bit errors leave in a data
/// frame: P(s) = P(the 4 header bits are intact and the error pattern on the
/// frame_bits - 4 payload + CRC bits has CRC syndrome s), s = 0..4095 (s = 0
/// includes the error-free frame). Exact, by dynamic programming over the
/// positions (P'(s) = (1 - ber) P(s) + ber P(s ^ h_i), h_i the syndrome of
/// position i; convex combinations only, no cancellation).
///
/// Use: a data frame of counter c that reaches a receiver expecting counter
/// e != c (a replayed, older frame; a frame in flight past a rolled-back
/// counter) passes the check iff its error pattern's syndrome is (c ^ e) &
/// 0xFFF (the CRC is XORed with the counter, rifl.md "Frames"): it is then
/// accepted out of order, an undetected error the weight distribution above
/// does not count. expected(counts) sums P over such frames.
/// Errors: std::invalid_argument if frame_bits < 32 or ber outside [0, 0.5].
class SyndromeDistribution {
 public:
  SyndromeDistribution(std::uint32_t frame_bits, double ber);
  /// P(syndrome s, header intact); s < 4096.
  double p(std::uint32_t s) const { return p_[s & 0xFFFu]; }
  /// sum over s = 1..4095 of counts[s] x p(s): the expected number of frames
  /// accepted out of order among counts[s] frames that each needed syndrome s
  /// (counts has 4096 entries, or is empty: 0).
  double expected(const std::vector<std::uint64_t>& counts) const;

 private:
  std::vector<double> p_;
};

}  // namespace fabricsim::rifl
