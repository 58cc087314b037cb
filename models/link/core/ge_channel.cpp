#include "models/link/core/ge_channel.h"

#include "models/link/core/counter_rng.h"
#include "models/link/core/intern.h"

namespace fabricsim::link {

namespace {
constexpr std::uint64_t kStreamChain = 1;
constexpr std::uint64_t kStreamCorrupt = 2;
constexpr std::uint64_t kStreamMagnitude = 3;
}  // namespace

GilbertElliott::GilbertElliott(const GeParams& p, std::uint64_t seed, std::uint64_t link_id)
    : stream_key_(key_stream(seed, link_id)), p_(&intern(p)) {}

// Every draw of a step shares key_index(step): the chain step and the first
// attempt's corruption are drawn at the same step one after the other.
std::uint64_t GilbertElliott::index_key(std::uint64_t step) {
  if (step != cached_step_) {
    cached_step_ = step;
    cached_key_ = key_index(stream_key_, step);
  }
  return cached_key_;
}

void GilbertElliott::extend_to(std::uint64_t step) {
  while (generated_ <= step) {
    const std::uint64_t i = generated_;
    const double u = to_unit(key_attempt(index_key(i), 0, kStreamChain));
    bool bad;
    if (i == 0) {
      bad = u < p_->stationary_bad();
    } else if (last_bad_) {
      bad = !(u < p_->b);
      (bad ? n_bb_ : n_bg_)++;
    } else {
      bad = u < p_->a;
      (bad ? n_gb_ : n_gg_)++;
    }
    if (bad) tail_word_ |= 1ULL << (i & 63);
    last_bad_ = bad;
    ++generated_;
    if ((generated_ & 63) == 0) {
      bits_.push_back(tail_word_);
      tail_word_ = 0;
    }
  }
}

bool GilbertElliott::state_bad(std::uint64_t step) {
  extend_to(step);
  if (step + 1 == generated_) return last_bad_;  // the newest step (a first attempt): no read of bits_
  const std::uint64_t word = (step >> 6) == (generated_ >> 6) ? tail_word_ : bits_[step >> 6];
  return (word >> (step & 63)) & 1ULL;
}

ChannelDraw GilbertElliott::draw(std::uint64_t step, std::uint64_t attempt) {
  ChannelDraw d;
  d.bad = state_bad(step);
  const double e = d.bad ? p_->e_bad : p_->e_good;
  const std::uint64_t k = index_key(step);
  const double u = to_unit(key_attempt(k, attempt, kStreamCorrupt));
  if (u < e) {
    const std::uint32_t m = d.bad ? p_->m_bad : p_->m_good;
    const double v = to_unit(key_attempt(k, attempt, kStreamMagnitude));
    d.magnitude = 1 + static_cast<std::uint32_t>(v * m);
  }
  return d;
}

double GilbertElliott::estimate_a() const {
  const auto n = n_gg_ + n_gb_;
  return n ? static_cast<double>(n_gb_) / static_cast<double>(n) : 0.0;
}

double GilbertElliott::estimate_b() const {
  const auto n = n_bb_ + n_bg_;
  return n ? static_cast<double>(n_bg_) / static_cast<double>(n) : 0.0;
}

}  // namespace fabricsim::link
