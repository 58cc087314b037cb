#include "models/rifl/core/crc12.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace fabricsim::rifl {

namespace {
// One message bit into the register (MSB first).
inline std::uint32_t step(std::uint32_t r, std::uint32_t in) {
  const std::uint32_t top = ((r >> 11) & 1u) ^ in;
  r = (r << 1) & 0xFFFu;
  return top ? r ^ kCrc12Poly : r;
}
// table[b] = register after feeding byte b into a zero register, MSB first.
struct Table {
  std::uint16_t t[256];
  Table() {
    for (std::uint32_t b = 0; b < 256; ++b) {
      std::uint32_t r = 0;
      for (int i = 7; i >= 0; --i) r = step(r, (b >> i) & 1u);
      t[b] = static_cast<std::uint16_t>(r);
    }
  }
};
const Table kTable;

// Syndrome x^d mod g of a single error d positions from the frame's end
// (d < 12: a CRC bit), for the frame_bits - 4 payload + CRC positions.
std::vector<std::uint16_t> position_syndromes(std::uint32_t n) {
  std::vector<std::uint16_t> syn(n);
  std::uint32_t r = 1;
  for (std::uint32_t d = 0; d < n; ++d) {
    syn[d] = static_cast<std::uint16_t>(r);
    const std::uint32_t top = (r >> 11) & 1u;
    r = (r << 1) & 0xFFFu;
    if (top) r ^= kCrc12Poly;
  }
  return syn;
}

// dst[t] += src[t ^ h] for all 4096 syndromes t: the same additions as
// dst[s ^ h] += src[s] for all s, in blocks of 8 (t ^ h = (t ^ hi) + (k ^ LO)
// for t = b + k, h = hi + LO, hi a multiple of 8), so each block is 8 loads
// at fixed offsets from one base.
template <std::uint32_t LO>
void add_shifted(double* dst, const double* src, std::uint32_t hi) {
  for (std::uint32_t b = 0; b < 4096; b += 8) {
    const double* s = src + (b ^ hi);
    double* d = dst + b;
    d[0] += s[0 ^ LO];
    d[1] += s[1 ^ LO];
    d[2] += s[2 ^ LO];
    d[3] += s[3 ^ LO];
    d[4] += s[4 ^ LO];
    d[5] += s[5 ^ LO];
    d[6] += s[6 ^ LO];
    d[7] += s[7 ^ LO];
  }
}
void add_xor(double* dst, const double* src, std::uint32_t h) {
  const std::uint32_t hi = h & ~7u;
  switch (h & 7u) {
    case 0: add_shifted<0>(dst, src, hi); break;
    case 1: add_shifted<1>(dst, src, hi); break;
    case 2: add_shifted<2>(dst, src, hi); break;
    case 3: add_shifted<3>(dst, src, hi); break;
    case 4: add_shifted<4>(dst, src, hi); break;
    case 5: add_shifted<5>(dst, src, hi); break;
    case 6: add_shifted<6>(dst, src, hi); break;
    default: add_shifted<7>(dst, src, hi); break;
  }
}
}  // namespace

std::uint16_t crc12(const std::vector<std::uint64_t>& bits, std::size_t nbits) {
  // Bytewise: the register's top 8 bits XOR the next message byte select the
  // table entry (linearity of the remainder); the tail bit by bit.
  std::uint32_t r = 0;
  std::size_t i = 0;
  for (; i + 8 <= nbits; i += 8) {
    const std::uint32_t byte = static_cast<std::uint32_t>((bits[i >> 6] >> (56 - (i & 63))) & 0xFFu);
    r = ((r << 8) & 0xFFFu) ^ kTable.t[((r >> 4) ^ byte) & 0xFFu];
  }
  for (; i < nbits; ++i) r = step(r, (bits[i >> 6] >> (63 - (i & 63))) & 1u);
  return static_cast<std::uint16_t>(r);
}

std::uint16_t crc12_bitwise(const std::vector<std::uint64_t>& bits, std::size_t nbits) {
  std::uint32_t r = 0;
  for (std::size_t i = 0; i < nbits; ++i) r = step(r, (bits[i >> 6] >> (63 - (i & 63))) & 1u);
  return static_cast<std::uint16_t>(r);
}

std::uint16_t crc12_of_string(const char* s) {
  const std::size_t n = std::strlen(s);
  std::vector<std::uint64_t> w((n + 63) / 64 + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (s[i] == '1') w[i >> 6] |= 1ULL << (63 - (i & 63));
  return crc12(w, n);
}

UndetectedErrorModel::UndetectedErrorModel(std::uint32_t frame_bits, std::uint32_t max_weight) : n_(frame_bits) {
  if (frame_bits < 32) throw std::invalid_argument("frame must have at least 32 bits");
  if (max_weight < 2) throw std::invalid_argument("max_weight must be >= 2");
  // Syndrome of a single error at each of the payload + CRC positions: a CRC
  // bit at distance d from the end contributes x^d (d < 12); a payload bit at
  // distance d contributes x^d mod g.
  const std::uint32_t n = frame_bits - 4;
  const std::vector<std::uint16_t> syn = position_syndromes(n);
  const std::uint32_t W = std::min(max_weight, n);
  // cnt[w][s]: number of w-subsets of the positions seen so far with syndrome s.
  std::vector<double> cnt(static_cast<std::size_t>(W + 1) * 4096, 0.0);
  cnt[0] = 1.0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t h = syn[i];
    const std::uint32_t wtop = std::min(W, i + 1);
    for (std::uint32_t w = wtop; w >= 1; --w)
      add_xor(&cnt[static_cast<std::size_t>(w) * 4096], &cnt[static_cast<std::size_t>(w - 1) * 4096], h);
  }
  a_.assign(W + 1, 0.0);
  for (std::uint32_t w = 1; w <= W; ++w) a_[w] = cnt[static_cast<std::size_t>(w) * 4096];
}

SyndromeDistribution::SyndromeDistribution(std::uint32_t frame_bits, double ber) : p_(4096, 0.0) {
  if (frame_bits < 32) throw std::invalid_argument("frame must have at least 32 bits");
  if (!(ber >= 0 && ber <= 0.5)) throw std::invalid_argument("BER must be in [0, 0.5]");
  p_[0] = 1.0;
  if (ber > 0) {
    std::vector<double> next(4096);
    for (const std::uint16_t h : position_syndromes(frame_bits - 4)) {
      for (std::uint32_t s = 0; s < 4096; ++s) next[s] = (1 - ber) * p_[s] + ber * p_[s ^ h];
      p_.swap(next);
    }
  }
  const double header_intact = std::pow(1 - ber, 4);
  for (auto& v : p_) v *= header_intact;
}

double SyndromeDistribution::expected(const std::vector<std::uint64_t>& counts) const {
  double e = 0;
  for (std::size_t s = 1; s < counts.size() && s < 4096; ++s)
    if (counts[s]) e += static_cast<double>(counts[s]) * p_[s];
  return e;
}

std::uint32_t UndetectedErrorModel::min_distance() const {
  for (std::uint32_t w = 1; w < a_.size(); ++w)
    if (a_[w] > 0) return w;
  return 0;
}

double UndetectedErrorModel::probability(double p) const {
  if (p <= 0) return 0.0;
  double s = 0;
  const double lq = std::log1p(-p), lp = std::log(p);
  for (std::uint32_t w = 1; w < a_.size(); ++w)
    if (a_[w] > 0) s += std::exp(std::log(a_[w]) + w * lp + (n_ - w) * lq);
  return s;
}

double UndetectedErrorModel::truncation_bound(double p) const {
  if (p <= 0) return 0.0;
  // P(Binomial(n, p) > W) by summing the upper tail terms.
  const std::uint32_t W = static_cast<std::uint32_t>(a_.size()) - 1;
  double s = 0;
  const double lq = std::log1p(-p), lp = std::log(p);
  for (std::uint32_t k = W + 1; k <= n_; ++k)
    s += std::exp(std::lgamma(n_ + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n_ - k + 1.0) + k * lp + (n_ - k) * lq);
  return s;
}

}  // namespace fabricsim::rifl
