#pragma once
// FEC / flight-control policies over one replay machine (link-layer.md §4).
// The replay machine sees only this interface; it does not know which policy
// runs (mechanism apart from policy, style.md item 4).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/link/core/fec_profile.h"
#include "models/link/core/ge_channel.h"

namespace fabricsim::link {

/// What the receiver learns from one decoded flit.
struct Observation {
  bool raw_error = false;      ///< z_t: >= 1 raw symbol error (corrected or not)
  bool decode_failed = false;  ///< magnitude exceeded the profile's c_k
  std::size_t profile = 0;     ///< index of the profile the flit was sent with
};

/// The transmitter's operating point: FEC profile index and admission window W_t (flits).
struct Decision {
  std::size_t profile = 0;
  std::uint32_t window = 16;
  bool operator==(const Decision& o) const { return profile == o.profile && window == o.window; }
};

/// A policy: fed every decoded flit, queried by the transmitter. Its
/// decision() may change only in observe() (the link engine keeps a copy and
/// refreshes it after every observation).
class FecPolicy {
 public:
  virtual ~FecPolicy() = default;
  virtual void observe(const Observation& obs) = 0;
  virtual Decision decision() const = 0;
};

/// PREFACE posterior filter over the Gilbert-Elliott state (paper Eq. 3-4).
/// posterior q_t = q^- P(z|B) / (q^- P(z|B) + (1-q^-) P(z|G)), P(1|B)=e_B, P(1|G)=e_G;
/// prediction q_{t+1}^- = q_t (1-b) + (1-q_t) a. Starts from the stationary prior a/(a+b).
class PrefaceFilter {
 public:
  explicit PrefaceFilter(const GeParams& model);
  /// Feed observation z_t; returns the new prior q_{t+1}^-.
  double update(bool z);
  double prior() const { return prior_; }          ///< q_{t+1}^- (for the next flit)
  double posterior() const { return posterior_; }  ///< q_t after the last update
 private:
  double prior_;
  double posterior_;
  // The update is a pure function of (prior, z); on a clean stretch the prior
  // settles on a fixed point, so the last result per z is kept and reused.
  // (Read first by every update: the state and the memo share one cache line.)
  struct Memo {
    double prior_in = -1, posterior, prior_out;
  } memo_[2];
  GeParams m_;
};

/// Residual-error estimate of profile k at BAD-probability q (paper Eq. 5):
/// r_k(q) = (1-q) e_G max(0, 1 - c_k/m_G) + q e_B max(0, 1 - c_k/m_B).
double residual_estimate(const GeParams& model, const FecProfile& p, double q);

/// Coding selector (paper Eq. 6-7): argmin_k o_k + lambda r_k(q); ties go to the
/// lower (weaker) profile. Returns the profile index.
std::size_t select_profile(const GeParams& model, const FecMenu& menu, double lambda, double q);

/// Parameters of the post-decode baseline (constants are the project's own;
/// docs/models/link.md explains the calibration).
struct PostDecodeParams {
  double ewma_alpha = 0.25;   ///< weight of the newest decode outcome
  double raise_above = 0.2;   ///< step one profile stronger when EWMA > this
  double lower_below = 0.01;  ///< step one profile weaker when EWMA < this (hysteresis)
};

/// Policy parameters shared by the factory.
struct PolicyParams {
  double lambda = 16.0;              ///< PREFACE residual weight (Table 3)
  std::uint32_t window_high = 16;    ///< W_H, flits
  std::uint32_t window_reduced = 8;  ///< W_R, flits
  GeParams model;                    ///< channel model the filter assumes
  PostDecodeParams post_decode;
};

/// Policy names accepted by make_policy, in canonical order.
const std::vector<std::string>& policy_names();

/// Build a policy by name: "fixed-strong", "post-decode", "predictive-fec", "preface".
/// Throws std::invalid_argument for an unknown name (message lists the valid ones).
std::unique_ptr<FecPolicy> make_policy(const std::string& name, const FecMenu& menu, const PolicyParams& p);

/// fixed-strong: strongest profile, W = W_H.
class FixedStrongPolicy : public FecPolicy {
 public:
  FixedStrongPolicy(const FecMenu& menu, std::uint32_t window_high);
  void observe(const Observation&) override {}
  Decision decision() const override { return d_; }

 private:
  Decision d_;
};

/// post-decode: EWMA over decode failures with hysteresis; W = W_H.
class PostDecodePolicy : public FecPolicy {
 public:
  PostDecodePolicy(const FecMenu& menu, std::uint32_t window_high, const PostDecodeParams& p);
  void observe(const Observation& obs) override;
  Decision decision() const override { return {level_, window_}; }
  double ewma() const { return ewma_; }

 private:
  std::size_t max_level_;
  std::uint32_t window_;
  PostDecodeParams p_;
  double ewma_ = 0.0;
  std::size_t level_ = 0;
};

/// predictive-fec (with_flight_cap = false) and preface (true): the PREFACE
/// coding selector on the filter's prediction, plus for preface the flight cap
/// (paper Eq. 8): W_t = min(W_H, W_R) when k* is the strongest profile, else W_H.
class PrefacePolicy : public FecPolicy {
 public:
  PrefacePolicy(const FecMenu& menu, const PolicyParams& p, bool with_flight_cap);
  void observe(const Observation& obs) override;
  Decision decision() const override { return d_; }
  const PrefaceFilter& filter() const { return filter_; }

 private:
  void decide();
  // cost_k(q) = o_k + lambda ((1-q) g_k + q b_k), g_k and b_k from Eq. 5, in one block.
  struct Coef {
    double overhead, good, bad;
  };
  // What every observation reads first: the decision, its prior and the filter.
  Decision d_;
  double decided_at_ = -1;  // the prior d_ was computed for (decide() is a pure function of it)
  PrefaceFilter filter_;
  std::vector<Coef> coef_;
  bool cap_;
  PolicyParams p_;
};

}  // namespace fabricsim::link
