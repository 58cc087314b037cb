#include "models/rifl/core/error_stream.h"

#include <algorithm>
#include <cmath>

#include "models/link/core/counter_rng.h"

namespace fabricsim::rifl {

namespace {
constexpr std::uint64_t kStreamGap = 11, kStreamPos = 12;
}

IndependentBitErrors::IndependentBitErrors(double ber, std::uint32_t frame_bits, std::uint64_t seed,
                                           std::uint64_t stream_id)
    : ber_(ber), log_q_(std::log1p(-ber)), bits_(frame_bits), seed_(seed), stream_(stream_id) {
  if (ber_ > 0) advance(0);
}

void IndependentBitErrors::advance(std::uint64_t from_bit) {
  const double u = link::to_unit(link::key_hash(seed_, stream_, draws_++, 0, kStreamGap));
  const double g = std::floor(std::log1p(-u) / log_q_);
  if (!(g < 1.8e19) || from_bit + static_cast<std::uint64_t>(g) < from_bit) {
    next_bit_ = link::kNever;
    return;
  }
  next_bit_ = from_bit + static_cast<std::uint64_t>(g);
}

void IndependentBitErrors::take(std::uint64_t slot, std::vector<std::uint16_t>& pos) {
  pos.clear();
  const std::uint64_t end = (slot + 1) * bits_;
  while (next_bit_ != link::kNever && next_bit_ < end) {
    pos.push_back(static_cast<std::uint16_t>(next_bit_ - slot * bits_));
    advance(next_bit_ + 1);
  }
}

GilbertElliottFrames::GilbertElliottFrames(const link::GeParams& p, std::uint32_t frame_bits, std::uint64_t seed,
                                           std::uint64_t stream_id)
    : ge_(p, seed, stream_id), bits_(frame_bits), seed_(seed), stream_(stream_id) {}

std::uint64_t GilbertElliottFrames::next_hit_slot() {
  while (hit_ == link::kNever) {
    const auto d = ge_.draw(cursor_, 0);
    if (d.magnitude > 0) {
      hit_ = cursor_;
      magnitude_ = std::min<std::uint32_t>(d.magnitude, bits_);
    }
    ++cursor_;
  }
  return hit_;
}

void GilbertElliottFrames::take(std::uint64_t slot, std::vector<std::uint16_t>& pos) {
  pos.clear();
  for (std::uint32_t i = 0; pos.size() < magnitude_; ++i) {
    const auto p =
        static_cast<std::uint16_t>(link::to_unit(link::key_hash(seed_, stream_, slot, i, kStreamPos)) * bits_);
    if (std::find(pos.begin(), pos.end(), p) == pos.end()) pos.push_back(p);
  }
  std::sort(pos.begin(), pos.end());
  hit_ = link::kNever;
}

}  // namespace fabricsim::rifl
