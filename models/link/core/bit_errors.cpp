#include "models/link/core/bit_errors.h"

#include <cmath>

#include "models/link/core/counter_rng.h"

namespace fabricsim::link {

namespace {
constexpr std::uint64_t kStreamGap = 11;  // the stream tag of the gaps (shared with RIFL's error streams)
}

BitErrorStream::BitErrorStream(double ber, std::uint64_t seed, std::uint64_t stream_id)
    : ber_(ber), log_q_(std::log1p(-ber)), seed_(seed), stream_(stream_id) {
  if (ber_ > 0) advance(0);
}

void BitErrorStream::advance(std::uint64_t from_bit) {
  const double u = to_unit(key_hash(seed_, stream_, draws_++, 0, kStreamGap));
  const double g = std::floor(std::log1p(-u) / log_q_);
  if (!(g < 1.8e19) || from_bit + static_cast<std::uint64_t>(g) < from_bit) {
    next_bit_ = kNever;
    return;
  }
  next_bit_ = from_bit + static_cast<std::uint64_t>(g);
}

std::uint32_t take_symbol_errors(BitErrorStream& s, std::uint64_t first_bit, std::uint64_t bits,
                                 std::uint32_t symbol_bits) {
  const std::uint64_t end = first_bit + bits;
  std::uint32_t symbols = 0;
  std::uint64_t last_symbol = kNever;
  while (s.next() != kNever && s.next() < end) {
    const std::uint64_t sym = (s.next() - first_bit) / symbol_bits;
    if (sym != last_symbol) {
      ++symbols;
      last_symbol = sym;
    }
    s.pop();
  }
  return symbols;
}

}  // namespace fabricsim::link
