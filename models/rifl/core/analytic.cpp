#include "models/rifl/core/analytic.h"

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
  const double pab = frame_error_probability(c.ber_ab, c.frame_bits);
  const double pba = frame_error_probability(c.ber_ba, c.frame_bits);
  const double ab = 1.0 / (1.0 + pab * k.forward_slots + pba * k.reverse_slots);
  if (!c.load_ba) return ab;
  const double ba = 1.0 / (1.0 + pba * k.forward_slots + pab * k.reverse_slots);
  return 0.5 * (ab + ba);
}

}  // namespace fabricsim::rifl
