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

}  // namespace fabricsim::rifl
