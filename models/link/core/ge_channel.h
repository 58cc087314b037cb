#pragma once
// Gilbert-Elliott burst channel (link-layer.md §2).
#include <cstdint>
#include <tuple>
#include <vector>

#include "models/link/core/types.h"

namespace fabricsim::link {

/// Parameters of the two-state Gilbert-Elliott chain.
/// a = P(GOOD->BAD) per step, b = P(BAD->GOOD) per step, e_good / e_bad =
/// probability that a flit has >= 1 raw symbol error in that state, m_good /
/// m_bad = the error magnitude (symbols) of a corrupted flit is uniform on
/// 1..m. Paper Table 3: a=0.004, b=0.08, e_G=0.001, e_B=0.6, m_G=1, m_B=24.
struct GeParams {
  double a = 0.004;
  double b = 0.08;
  double e_good = 0.001;
  double e_bad = 0.6;
  std::uint32_t m_good = 1;
  std::uint32_t m_bad = 24;

  /// Stationary P(BAD) = a / (a + b) (link-layer.md §2).
  double stationary_bad() const { return a / (a + b); }
  /// Ordered by value (channels with equal parameters share one interned copy).
  bool operator<(const GeParams& o) const {
    return std::tie(a, b, e_good, e_bad, m_good, m_bad) < std::tie(o.a, o.b, o.e_good, o.e_bad, o.m_good, o.m_bad);
  }
};

/// Outcome of one transmission attempt over the channel.
struct ChannelDraw {
  bool bad = false;             ///< hidden chain state at the step
  std::uint32_t magnitude = 0;  ///< raw symbol errors; 0 = clean flit
};

/// Gilbert-Elliott channel of one link direction.
///
/// The chain state at step i is a pure function of (seed, link_id, i): the
/// chain is generated lazily from counter-based uniforms, step 0 drawn from the
/// stationary distribution. Each attempt (step, attempt) draws its own
/// corruption and magnitude, never reusing another attempt's outcome. So the
/// per-step stream does not depend on the policy that consumes it.
/// Memory: one bit per generated step.
class GilbertElliott {
 public:
  /// Errors: none here; parameter ranges are validated by the config layer.
  GilbertElliott(const GeParams& p, std::uint64_t seed, std::uint64_t link_id);

  /// Hidden state at chain step `step` (true = BAD); extends the chain lazily.
  bool state_bad(std::uint64_t step);

  /// Corruption and magnitude of attempt `attempt` (0-based) at chain step `step`.
  ChannelDraw draw(std::uint64_t step, std::uint64_t attempt);

  /// Online transition counters over the steps generated so far: the
  /// estimates of a and b a receiver with state visibility would make.
  double estimate_a() const;
  double estimate_b() const;
  std::uint64_t steps_generated() const { return generated_; }
  const GeParams& params() const { return *p_; }

 private:
  void extend_to(std::uint64_t step);
  std::uint64_t index_key(std::uint64_t step);
  // What every draw reads first (a fabric has one channel per link direction).
  std::uint64_t generated_ = 0;
  std::uint64_t cached_step_ = ~0ULL, cached_key_ = 0;  // key_index of the last step hashed
  std::uint64_t stream_key_;  // key_stream(seed, link_id): the first two rounds of every key_hash
  bool last_bad_ = false;     // state of step generated_ - 1
  // State bits of the steps of the word being filled (64 (generated_ / 64)
  // .. generated_ - 1): kept here and stored into bits_ when complete, so a
  // first attempt does not touch bits_ (a fabric's channels are out of the
  // caches between two of their draws).
  std::uint64_t tail_word_ = 0;
  // The chain's parameters, interned: shared by every channel with the same
  // values (a fabric's 16,384 channels keep 8 bytes of them, not 40).
  const GeParams* p_;
  std::vector<std::uint64_t> bits_;  // state bit per step, complete words
  std::uint64_t n_gg_ = 0, n_gb_ = 0, n_bg_ = 0, n_bb_ = 0;
};

}  // namespace fabricsim::link
