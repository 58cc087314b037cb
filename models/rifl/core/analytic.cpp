#include "models/rifl/core/analytic.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::rifl {

double frame_error_probability(double ber, std::uint32_t frame_bits) {
  return ber <= 0 ? 0.0 : -std::expm1(frame_bits * std::log1p(-ber));
}

RecoveryCost recovery_cost(const RiflDerived& d) {
  const double B = d.buffer, H = d.delay_slots;
  return {3 * B + 2, 3 * B - 2 * H - 13};
}

double analytic_bandwidth_ratio(const RiflConfig& c, const RiflDerived& d) {
  const RecoveryCost k = recovery_cost(d);
  const double L = d.fc_on, others = c.lanes - 1.0;
  const double K = k.forward_slots + k.reverse_slots +
                   others * (std::max(0.0, k.forward_slots - L) + std::max(0.0, k.reverse_slots - L));
  const double pab = frame_error_probability(c.ber_ab, c.frame_bits);
  const double pba = frame_error_probability(c.ber_ba, c.frame_bits);
  // Direction A->B pays K for its own errors' forward part and the reverse
  // errors' reverse part; with equal loads both directions see p_ab + p_ba
  // events, each costing (C_fwd + C_rev)-shaped losses split as above.
  const double ab = 1.0 / (1.0 + pab * (K - k.reverse_slots - others * std::max(0.0, k.reverse_slots - L)) +
                           pba * (k.reverse_slots + others * std::max(0.0, k.reverse_slots - L)));
  if (!c.load_ba) return ab;
  const double ba = 1.0 / (1.0 + pba * (K - k.reverse_slots - others * std::max(0.0, k.reverse_slots - L)) +
                           pab * (k.reverse_slots + others * std::max(0.0, k.reverse_slots - L)));
  return 0.5 * (ab + ba);
}

}  // namespace fabricsim::rifl
