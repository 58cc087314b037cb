#include "models/link/core/policy.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::link {

PrefaceFilter::PrefaceFilter(const GeParams& model)
    : prior_(model.stationary_bad()), posterior_(model.stationary_bad()), m_(model) {}

double PrefaceFilter::update(bool z) {
  Memo& mo = memo_[z ? 1 : 0];
  if (prior_ == mo.prior_in) {
    posterior_ = mo.posterior;
    prior_ = mo.prior_out;
    return prior_;
  }
  mo.prior_in = prior_;
  const double lb = z ? m_.e_bad : 1.0 - m_.e_bad;
  const double lg = z ? m_.e_good : 1.0 - m_.e_good;
  const double num = prior_ * lb;
  const double den = num + (1.0 - prior_) * lg;
  posterior_ = den > 0.0 ? num / den : prior_;
  prior_ = posterior_ * (1.0 - m_.b) + (1.0 - posterior_) * m_.a;
  mo.posterior = posterior_;
  mo.prior_out = prior_;
  return prior_;
}

double residual_estimate(const GeParams& m, const FecProfile& p, double q) {
  const double c = static_cast<double>(p.correctable);
  const double fg = m.m_good ? std::max(0.0, 1.0 - c / m.m_good) : 0.0;
  const double fb = m.m_bad ? std::max(0.0, 1.0 - c / m.m_bad) : 0.0;
  return (1.0 - q) * m.e_good * fg + q * m.e_bad * fb;
}

std::size_t select_profile(const GeParams& m, const FecMenu& menu, double lambda, double q) {
  std::size_t best = 0;
  double best_cost = 0.0;
  for (std::size_t k = 0; k < menu.size(); ++k) {
    const double cost = menu[k].overhead + lambda * residual_estimate(m, menu[k], q);
    if (k == 0 || cost < best_cost) {  // strict: ties keep the weaker profile
      best = k;
      best_cost = cost;
    }
  }
  return best;
}

const std::vector<std::string>& policy_names() {
  static const std::vector<std::string> n{"fixed-strong", "post-decode", "predictive-fec", "preface"};
  return n;
}

std::unique_ptr<FecPolicy> make_policy(const std::string& name, const FecMenu& menu, const PolicyParams& p) {
  if (menu.empty()) throw std::invalid_argument("FEC menu is empty");
  if (name == "fixed-strong") return std::make_unique<FixedStrongPolicy>(menu, p.window_high);
  if (name == "post-decode") return std::make_unique<PostDecodePolicy>(menu, p.window_high, p.post_decode);
  if (name == "predictive-fec") return std::make_unique<PrefacePolicy>(menu, p, false);
  if (name == "preface") return std::make_unique<PrefacePolicy>(menu, p, true);
  std::string valid;
  for (const auto& n : policy_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown policy '" + name + "' (valid: " + valid + ")");
}

FixedStrongPolicy::FixedStrongPolicy(const FecMenu& menu, std::uint32_t window_high)
    : d_{menu.size() - 1, window_high} {}

PostDecodePolicy::PostDecodePolicy(const FecMenu& menu, std::uint32_t window_high, const PostDecodeParams& p)
    : max_level_(menu.size() - 1), window_(window_high), p_(p) {}

void PostDecodePolicy::observe(const Observation& obs) {
  ewma_ = (1.0 - p_.ewma_alpha) * ewma_ + p_.ewma_alpha * (obs.decode_failed ? 1.0 : 0.0);
  if (ewma_ > p_.raise_above && level_ < max_level_) {
    ++level_;
  } else if (ewma_ < p_.lower_below && level_ > 0) {
    --level_;
  }
}

PrefacePolicy::PrefacePolicy(const FecMenu& menu, const PolicyParams& p, bool with_flight_cap)
    : filter_(p.model), cap_(with_flight_cap), p_(p) {
  for (const auto& f : menu)
    coef_.push_back({f.overhead, residual_estimate(p.model, f, 0.0), residual_estimate(p.model, f, 1.0)});
  decide();
}

void PrefacePolicy::observe(const Observation& obs) {
  filter_.update(obs.raw_error);
  decide();
}

void PrefacePolicy::decide() {
  // Same argmin as select_profile(), with the residual coefficients precomputed.
  const double q = filter_.prior();
  if (q == decided_at_) return;  // same prior, same decision
  decided_at_ = q;
  std::size_t best = 0;
  double best_cost = 0.0;
  for (std::size_t k = 0; k < coef_.size(); ++k) {
    const double cost = coef_[k].overhead + p_.lambda * ((1.0 - q) * coef_[k].good + q * coef_[k].bad);
    if (k == 0 || cost < best_cost) {
      best = k;
      best_cost = cost;
    }
  }
  d_.profile = best;
  const bool strongest = d_.profile + 1 == coef_.size();
  d_.window = (cap_ && strongest) ? std::min(p_.window_high, p_.window_reduced) : p_.window_high;
}

}  // namespace fabricsim::link
