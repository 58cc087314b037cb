#pragma once
// Closed-form bandwidth ratio of a RIFL link under independent bit errors,
// from the frame error probability and the cost of one recovery as the
// transmitter and receiver state machines (rifl_link.h) spend it.
#include <cstdint>

#include "models/rifl/core/rifl_link.h"

namespace fabricsim::rifl {

/// P(a frame of `frame_bits` bits has >= 1 bit error) = 1 - (1 - ber)^F.
double frame_error_probability(double ber, std::uint32_t frame_bits);

/// Frame slots lost per recovery, in steady state (after the first one).
///
/// A frame sent by end A at slot t0 fails at end B (one-way delay H slots).
/// - forward (A's fresh data): the 2H + 12 frames A sends until it learns of
///   the error (B's detection, 1 reaction slot, 8 consecutive retransmit
///   requests, A's reaction) are replayed, so they cost nothing extra; A
///   then spends 1 abnormal slot, B idle slots (its retransmit counter runs
///   from where the previous recovery left it, 2B + 1, to 3B and wraps),
///   2B replay slots (B buffered data frames interleaved with idle /
///   request frames) and 1 exit slot: 3B + 2.
/// - reverse (B's fresh data): B sends retransmit requests instead of data
///   from its reaction until the replayed frame just before the failed one
///   arrives (B idle slots, then replay slot 2 (B - 2H - 13) of that frame,
///   then H slots of flight): 3B - 2H - 13 slots.
/// Sources: rifl.md (the RTL's fixed replay sequence), the states in
/// rifl_link.cpp; a unit test checks both figures against a scripted error.
struct RecoveryCost {
  double forward_slots;
  double reverse_slots;
};
RecoveryCost recovery_cost(const RiflDerived& d);

/// Bandwidth ratio (delivered at this BER / error free) of the bonded link
/// when both directions run independent errors, first order in the frame
/// error probability p = frame_error_probability(ber) per frame slot:
///   ratio = 1 / (1 + p_ab K_ab + p_ba K_ba),
///   K = C_fwd + C_rev + (N - 1) (max(0, C_fwd - L) + max(0, C_rev - L)).
/// An error on one lane costs that lane its recovery (C_fwd on the failing
/// direction, C_rev on the other); the other N - 1 lanes may run ahead of it
/// by only L = fc_on frames before the reorder buffer's flow control pauses
/// them, so they lose the rest of the recovery too. Not in the formula:
/// errors inside a recovery (they lengthen it, or merge with it), and the
/// resume's round trip. The two directions carry equal loads; the result is
/// their mean.
double analytic_bandwidth_ratio(const RiflConfig& c, const RiflDerived& d);

}  // namespace fabricsim::rifl
